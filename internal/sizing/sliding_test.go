package sizing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// TestSlidingLayersWithoutAWindow: a config whose layer_types lists sliding layers and no
// sliding_window gets no size model, refused naming the field. Sized, those layers would
// be guessed: transformers gives them its class's default span (Gemma 3: 4,096, a ring of
// 8,192 entries) or fails on a null, and a ring of RingEntries(0, window) is no cache at
// all. The same layers with the window are sized as rings.
func TestSlidingLayersWithoutAWindow(t *testing.T) {
	const head = `{"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","num_hidden_layers":2,"num_attention_heads":2,` +
		`"num_key_value_heads":1,"head_dim":256,"hidden_size":512,"vocab_size":1024,"intermediate_size":1024,` +
		`"layer_types":["sliding_attention","full_attention"]`
	for _, tc := range []struct {
		name, window string
		kv4k         int64 // KVCacheBytes(4096), 0 where it is refused
	}{
		{"no sliding_window", "", 0},
		{"a null sliding_window", `,"sliding_window":null`, 0},
		// the full layer's 4,096 entries and the sliding layer's ring of 2 × 512, 2 KiB each
		{"sliding_window 512", `,"sliding_window":512`, 2048 * (4096 + 1024)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := model.ParseConfig("gemma/config.json", []byte(head+tc.window+"}"))
			require.NoError(t, err)
			src := &model.Source{ID: "google/gemma-test", Config: c, Params: &model.Params{Total: 1_000_000}}
			m, err := plan.SizingModel(src, family.Of(c))
			if tc.kv4k == 0 {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"sliding_window"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.kv4k, m.KVCacheBytes(4096))
			assert.Equal(t, tc.kv4k, m.KVCacheBytesAs(sizing.KVFP32, 4096))
		})
	}
}
