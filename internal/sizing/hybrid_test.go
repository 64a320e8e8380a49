package sizing

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/stretchr/testify/assert"
)

// TestHybridCaches: Qwen3.5's cache grows only in its full-attention layers beside a fixed
// DeltaNet state, and Gemma 3's sliding layers keep rings of twice their window, fp32 only
// on optimum-executorch's route (new-families.md, A and C).
func TestHybridCaches(t *testing.T) {
	qwen35 := Model{Arch: model.Arch{Layers: 24, KVHeads: 2, HeadDim: 256,
		LayerTypes: repeat([]string{"linear_attention", "linear_attention", "linear_attention", "full_attention"}, 6),
		DeltaNet:   model.DeltaNet{KeyHeads: 16, ValueHeads: 16, KeyHeadDim: 128, ValueHeadDim: 128, ConvKernel: 4}}}
	assert.Equal(t, int64(24_576), qwen35.KVBytesPerToken())
	assert.Equal(t, int64(20_643_840), qwen35.StateBytes())
	assert.Equal(t, int64(6*2*2*(256+5)), qwen35.KVBytesPerTokenAs(KVInt8), "the int8 cache of the full layers")
	assert.Equal(t, []string{KVFP32, KVInt8}, qwen35.KVCaches())

	gemma := Model{Arch: model.Arch{Layers: 6, KVHeads: 1, HeadDim: 256, SlidingWindowLen: 512,
		LayerTypes: []string{"sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"}},
		Family: family.ByKey("gemma3")}
	assert.Equal(t, int64(2048), gemma.KVBytesPerToken())
	assert.Equal(t, int64(2048*4096+5*1024*2048), gemma.KVCacheBytes(4096), "rings of 2 × 512 entries")
	assert.Equal(t, int64(2048*300+5*600*2048), gemma.KVCacheBytes(300), "a window under the sliding one")
	assert.Equal(t, []string{KVFP32}, gemma.KVCaches())
	assert.Zero(t, gemma.RopeBytes(), "optimum's model computes its rotation")
	assert.Zero(t, gemma.StateBytes())

	// An Arch made in code with sliding layers and no window (model refuses such a config)
	// gives them a cache over the whole window, never a ring of no entries.
	noWindow := gemma
	noWindow.Arch.SlidingWindowLen = 0
	assert.Equal(t, int64(6*2048), noWindow.KVBytesPerToken())
	assert.Equal(t, int64(6*2048*4096), noWindow.KVCacheBytes(4096))
}

func repeat(s []string, n int) []string {
	var out []string
	for range n {
		out = append(out, s...)
	}
	return out
}
