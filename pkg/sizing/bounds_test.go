package sizing_test

import (
	"math"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atBounds is a config.json with every architecture number at the largest value
// pkg/model accepts, and an untied head so the embedding counts twice.
const atBounds = `{"num_hidden_layers":1024,"hidden_size":65536,"num_attention_heads":1024,
"num_key_value_heads":1024,"head_dim":1024,"vocab_size":4194304,"intermediate_size":1048576,
"max_position_embeddings":134217728,"tie_word_embeddings":false}`

// every size sizing computes for one window, with the default config's MediaTek settings.
func allSizes(t *testing.T, m sizing.Model, w int) map[string]int64 {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	mt := cfg.Export.MediaTek
	x, err := m.PTEBytesXNNPACK("fp32", w)
	require.NoError(t, err)
	v, err := m.PTEBytesVulkan("fp32", w)
	require.NoError(t, err)
	files, err := m.PTEBytesMediaTek("A16W16", 1, w)
	require.NoError(t, err)
	need := m.MediaTekNeed(w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, false)
	stream := m.MediaTekNeed(w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, true)
	return map[string]int64{
		"kv per token": m.KVBytesPerToken(), "kv cache": m.KVCacheBytes(w), "masks": m.MaskBytes(w),
		"xnnpack pte": x, "vulkan pte": v, "qnn pte": m.PTEBytesQNN(w), "npu kv": m.NPUKVCacheBytes(w),
		"mediatek files": files.Total(), "export peak": m.ExportPeakBytes(w),
		"host xnnpack": m.HostNeedXNNPACK(w), "host vulkan": m.HostNeedVulkan(w), "host qnn": m.HostNeedQNN(w),
		"disk llm": m.DiskNeedLLM(x), "disk qnn": m.DiskNeedQNN(m.PTEBytesQNN(w)),
		"mediatek calibration": need.CalibrationBytes, "mediatek disk": need.DiskBytes,
		"mediatek streaming": stream.CalibrationBytes,
	}
}

// TestBoundsKeepSizesInRange is the proof behind pkg/model's archBounds: with every
// architecture number at its bound, the largest parameter count accepted and the widest
// window the config accepts (2^20), every size is positive and below 2^62, so nothing
// wraps and nothing saturates.
func TestBoundsKeepSizesInRange(t *testing.T) {
	c, err := model.ParseConfig("bounds/config.json", []byte(atBounds))
	require.NoError(t, err)
	a, err := c.Arch()
	require.NoError(t, err)
	computed := a.ComputedParams()
	require.Positive(t, computed)
	assert.LessOrEqual(t, computed, int64(model.MaxParams), "a computed count must stay within what a header may claim")
	for _, params := range []int64{computed, model.MaxParams} {
		m := sizing.Model{Arch: a, Params: params, HFRope: true}
		for _, w := range []int{128, 32768, 1 << 20} {
			for name, v := range allSizes(t, m, w) {
				assert.Positive(t, v, "%s at %d tokens, %d parameters", name, w, params)
				assert.Less(t, v, int64(1)<<62, "%s at %d tokens, %d parameters", name, w, params)
			}
		}
	}
}

// TestSizesSaturate: settings no pipeline.yaml should have (a response cap of 2^40 tokens,
// a window of 2^62) give the largest size rather than a wrapped, negative one.
func TestSizesSaturate(t *testing.T) {
	m := sized(t, "Qwen/Qwen3-1.7B")
	assert.Equal(t, int64(sizing.MaxBytes), m.MediaTekNeed(32768, 1<<40, 128, 14, false).CalibrationBytes)
	assert.Equal(t, int64(sizing.MaxBytes), m.MediaTekNeed(32768, 1<<40, 128, 14, false).DiskBytes)
	assert.Equal(t, int64(sizing.MaxBytes), m.MediaTekNeed(1<<40, 9, 1<<40, 14, true).CalibrationBytes)
	assert.Equal(t, int64(sizing.MaxBytes), m.KVCacheBytes(math.MaxInt64/4))
	assert.Equal(t, int64(sizing.MaxBytes), m.MaskBytes(1<<40))
	assert.Equal(t, int64(sizing.MaxBytes), m.ExportPeakBytes(1<<40))
	assert.Equal(t, int64(sizing.MaxBytes), m.HostNeedXNNPACK(1<<40))
	assert.Equal(t, int64(sizing.MaxBytes), m.DiskNeedLLM(sizing.MaxBytes))
	pte, err := m.PTEBytesXNNPACK("8da4w", math.MaxInt64)
	require.NoError(t, err)
	assert.Equal(t, int64(sizing.MaxBytes), pte)
}
