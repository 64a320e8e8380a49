package sizing_test

import (
	"math"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/internal/sizing/sizingtest"
	"github.com/stretchr/testify/assert"
)

// TestBoundsKeepSizesInRange is the proof behind internal/model's archBounds: with every
// architecture number at its bound, the largest parameter count accepted and the widest
// window the config accepts (2^20), every shared size is positive and below 2^62, so
// nothing wraps and nothing saturates (each backend's tests hold its own sizes to the same).
func TestBoundsKeepSizesInRange(t *testing.T) {
	for _, m := range sizingtest.AtBounds(t) {
		for _, w := range sizingtest.BoundWindows {
			for name, v := range map[string]int64{
				"kv per token": m.KVBytesPerToken(), "kv cache": m.KVCacheBytes(w), "masks": m.MaskBytes(w),
				"npu kv": m.NPUKVCacheBytes(w), "export peak": m.ExportPeakBytes(w), "disk llm": m.DiskNeedLLM(m.MaskBytes(w)),
			} {
				sizingtest.InRange(t, v, "%s at %d tokens, %d parameters", name, w, m.Params)
			}
		}
	}
}

// TestSizesSaturate: a window of 2^62 gives the largest size rather than a wrapped,
// negative one.
func TestSizesSaturate(t *testing.T) {
	m := sizingtest.Sized(t, "Qwen/Qwen3-1.7B")
	assert.Equal(t, int64(sizing.MaxBytes), m.KVCacheBytes(math.MaxInt64/4))
	assert.Equal(t, int64(sizing.MaxBytes), m.MaskBytes(1<<40))
	assert.Equal(t, int64(sizing.MaxBytes), m.ExportPeakBytes(1<<40))
	assert.Equal(t, int64(sizing.MaxBytes), m.DiskNeedLLM(sizing.MaxBytes))
	assert.Equal(t, int64(sizing.MaxBytes), sizing.MulBytes(1<<40, 1<<40))
	assert.Equal(t, int64(sizing.MaxBytes), sizing.AddBytes(sizing.MaxBytes, 1))
	assert.Equal(t, int64(sizing.MaxBytes), sizing.FloatBytes(math.NaN()))
}
