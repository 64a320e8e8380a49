package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestPhoneBudgetAtTheEdge: a window whose resident bytes equal export.device_budget_bytes
// fits the phone, and one byte less of budget does not (docs/research/bounds.md); the
// fallback plan skips an fp32 file by this flag (Plan.fallbackSkip).
func TestPhoneBudgetAtTheEdge(t *testing.T) {
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	m, err := plan.SizingModel(src, family.Of(src.Config))
	require.NoError(t, err)
	cfg, err := config.Default()
	require.NoError(t, err)
	b := backend.ByName("xnnpack")
	row, err := plan.Estimate(cfg, src, m, b, "fp32", 2048)
	require.NoError(t, err)
	require.Positive(t, row.ResidentBytes)
	for _, tc := range []struct {
		name   string
		budget int64
		fits   bool
	}{
		{"budget equals the resident bytes", row.ResidentBytes, true},
		{"budget one byte short", row.ResidentBytes - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *cfg
			c.Export.DeviceBudgetBytes = tc.budget
			got, err := plan.Estimate(&c, src, m, b, "fp32", 2048)
			require.NoError(t, err)
			assert.Equal(t, row.ResidentBytes, got.ResidentBytes)
			assert.Equal(t, tc.fits, got.FitsPhone)
		})
	}
}
