package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestCacheKind: the memory line names the cache the recipe recorded; a report from before
// it was recorded gets its backend card's cache (the NPU backends' 16-bit ones), else fp32.
func TestCacheKind(t *testing.T) {
	tests := []struct {
		backend, recorded, want string
	}{
		{"xnnpack", "int8", "int8"},
		{"xnnpack", "", "fp32"},
		{"vulkan", "", "fp32"},
		{"qnn", "", "16-bit"},
		{"mediatek", "", "16-bit"},
		{"qnn", "fp32", "fp32"},
		{"no-such-backend", "", "fp32"},
	}
	for _, tt := range tests {
		t.Run(tt.backend+"/"+tt.recorded, func(t *testing.T) {
			r := &report.Report{Backend: tt.backend, Recipe: map[string]any{}}
			if tt.recorded != "" {
				r.Recipe["kv_cache_dtype"] = tt.recorded
			}
			assert.Equal(t, tt.want, cacheKind(r))
		})
	}
}
