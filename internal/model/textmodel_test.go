package model_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTextModelParams: Qwen3.5's wrapper is exported as its text model, so its parameter
// count leaves the vision tower and the MTP head out, whether read from the headers or,
// without shards, computed (the index metadata's total counts them all).
func TestTextModelParams(t *testing.T) {
	wrapper, err := model.ParseConfig("c", []byte(`{"architectures":["Qwen3_5ForConditionalGeneration"],"vision_config":{}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"model.visual.", "mtp."}, wrapper.LeftOut())
	plain, err := model.ParseConfig("c", []byte(`{"architectures":["Qwen3ForCausalLM"]}`))
	require.NoError(t, err)
	assert.Nil(t, plain.LeftOut())

	dir := t.TempDir()
	writeSafetensors(t, filepath.Join(dir, model.SingleFile), map[string][]int64{
		"model.language_model.embed_tokens.weight": {10, 4},
		"model.language_model.norm.weight":         {4},
		"model.visual.blocks.0.attn.qkv.weight":    {12, 4},
		"mtp.fc.weight":                            {4, 8},
	}, 0)
	p, err := model.CountParams(context.Background(), model.Dir(dir), wrapper)
	require.NoError(t, err)
	assert.Equal(t, int64(44), p.Total)
	assert.Equal(t, "safetensors headers, text model only (model.visual.*, mtp.* left out)", p.Source)
	all, err := model.CountParams(context.Background(), model.Dir(dir), plain)
	require.NoError(t, err)
	assert.Equal(t, int64(124), all.Total, "another class counts every tensor")

	sharded := t.TempDir()
	ix := `{"metadata":{"total_size":248},"weight_map":{"a":"model-00001-of-00001.safetensors"}}`
	require.NoError(t, os.WriteFile(filepath.Join(sharded, model.IndexFile), []byte(ix), 0o644))
	_, err = model.CountParams(context.Background(), model.Dir(sharded), wrapper)
	assert.ErrorIs(t, err, model.ErrTextNotCounted)
}

// TestHybridLayers: which layers keep a KV cache, which slide and which keep a DeltaNet
// state, as plan's sizing reads them.
func TestHybridLayers(t *testing.T) {
	tests := []struct {
		name, json                string
		attend, sliding, deltanet int64
		window                    int64
	}{
		{"qwen3.5", `{"architectures":["Qwen3_5ForConditionalGeneration"],"text_config":{"num_hidden_layers":4,"num_attention_heads":2,"hidden_size":8,"vocab_size":16,"intermediate_size":8,
			"layer_types":["linear_attention","linear_attention","linear_attention","full_attention"],"sliding_window":null,
			"linear_num_key_heads":2,"linear_num_value_heads":4,"linear_key_head_dim":16,"linear_value_head_dim":16,"linear_conv_kernel_dim":4}}`, 1, 0, 3, 0},
		// gemma-3-1b-it gives only the pattern: transformers derives the list
		{"gemma3 pattern", `{"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","num_hidden_layers":8,"num_attention_heads":2,"hidden_size":8,"vocab_size":16,"intermediate_size":8,
			"sliding_window":512,"sliding_window_pattern":6}`, 8, 7, 0, 512},
		{"gemma3 list", `{"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","num_hidden_layers":2,"num_attention_heads":2,"hidden_size":8,"vocab_size":16,"intermediate_size":8,
			"sliding_window":512,"layer_types":["sliding_attention","full_attention"]}`, 2, 1, 0, 512},
		// Qwen's and Phi's unused sliding_window caps nothing
		{"unused window", `{"architectures":["Qwen3ForCausalLM"],"num_hidden_layers":2,"num_attention_heads":2,"hidden_size":8,"vocab_size":16,"intermediate_size":8,
			"sliding_window":32768}`, 2, 0, 0, 0},
		{"lfm2", `{"architectures":["Lfm2ForCausalLM"],"model_type":"lfm2","num_hidden_layers":3,"num_attention_heads":2,"hidden_size":8,"vocab_size":16,"intermediate_size":8,
			"layer_types":["conv","full_attention","conv"]}`, 1, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := model.ParseConfig("c", []byte(tc.json))
			require.NoError(t, err)
			a, err := c.Arch()
			require.NoError(t, err)
			assert.Equal(t, [4]int64{tc.attend, tc.sliding, tc.deltanet, tc.window},
				[4]int64{a.AttentionLayers(), a.SlidingLayers(), a.DeltaNetLayers(), a.SlidingWindowLen})
		})
	}
	// Sliding layers with no sliding_window: transformers fills in its class's default span
	// (Gemma 3: 4,096) or fails on a null, so the ring caches cannot be sized; refused by key.
	for name, window := range map[string]string{"absent": "", "null": `"sliding_window":null,`} {
		t.Run("sliding layers, sliding_window "+name, func(t *testing.T) {
			c, err := model.ParseConfig("c", []byte(`{"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","num_hidden_layers":2,"num_attention_heads":2,"hidden_size":8,"vocab_size":16,"intermediate_size":8,`+
				window+`"layer_types":["sliding_attention","full_attention"]}`))
			require.NoError(t, err, "a missing number refuses sizing, not the model")
			_, err = c.Arch()
			require.Error(t, err)
			assert.Contains(t, err.Error(), `lists 1 sliding_attention layers in layer_types and no positive integer "sliding_window"`)
		})
	}
	_, err := model.ParseConfig("c", []byte(`{"linear_num_value_heads":0}`))
	assert.ErrorContains(t, err, "linear_num_value_heads 0 is outside 1..1024")
	_, err = model.ParseConfig("c", []byte(`{"no_rope_layers":[1,2]}`))
	assert.ErrorContains(t, err, "no_rope_layers lists 2, not 0 or 1")
	_, err = model.ParseConfig("c", []byte(`{"partial_rotary_factor":1.5}`))
	assert.ErrorContains(t, err, "partial_rotary_factor is 1.5, not a number in (0, 1]")
}
