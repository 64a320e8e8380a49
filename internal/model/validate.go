package model

import (
	"encoding/json"
	"fmt"
	"math"
)

// ConfigError is a config.json that says something no model can be: a value out of range,
// of the wrong kind, or inconsistent with another. Callers refuse the model with it (plan
// and export exit 2) rather than sizing nonsense. Key is the offending key, dotted when it
// sits in text_config; it is empty only when the file is not a JSON object at all.
type ConfigError struct {
	File    string
	Key     string
	Problem string
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return e.File + ": " + e.Problem
	}
	return e.File + ": " + e.Key + " " + e.Problem
}

// archBound is the range one architecture number may take.
type archBound struct {
	key string
	max int64
}

// archBounds are the largest values config.json may give the numbers that sizing reads.
// They are generous, several times the largest released model, so no real checkpoint is
// refused; they exist so that a mistyped or hostile config.json is refused by key instead
// of wrapping the sizing arithmetic. The references: the fixtures (the Hugging Face configs
// of the embedded snapshot, internal/snapshot/data) and the largest open dense models (Llama 3.1
// 405B: 126 layers, hidden 16,384, 128 heads, FFN 53,248).
//
// With every number at its bound the parameter count stays below 2^50 (1,024 layers ×
// (4 × 65,536 × 1,024 × 1,024 attention + 3 × 65,536 × 2^20 feed-forward) + 2 × 2^22 ×
// 65,536 embedding and head), so every size sizing derives from it (at most a few dozen
// bytes per parameter, or the KV cache of at most 2^33 bytes per token times a window of at
// most 2^20) fits in int64 with room to spare; TestBoundsKeepSizesInRange checks it.
var archBounds = []archBound{
	{"num_hidden_layers", 1024},               // fixtures ≤ 48; deepest open model 126
	{"hidden_size", 65536},                    // fixtures ≤ 5,120; largest open 16,384
	{"num_attention_heads", 1024},             // fixtures ≤ 40; largest open 128
	{"num_key_value_heads", 1024},             // never more than the attention heads
	{"head_dim", 1024},                        // fixtures ≤ 256 (Gemma 3), the largest in use
	{"vocab_size", 1 << 22},                   // 4,194,304; fixtures ≤ 262,144 (Gemma 3)
	{"intermediate_size", maxFFNWidth},        // fixtures ≤ 16,384; largest open 53,248
	{"block_ff_dim", maxFFNWidth},             // LFM2's name for the feed-forward width
	{"max_position_embeddings", maxPositions}, // 134,217,728; fixtures ≤ 10,485,760 (Llama 4 Scout)
	{"block_multiple_of", 1 << 16},            // LFM2 rounds its FFN width to this (256)
	{"sliding_window", maxPositions},          // Gemma 3: 512; Phi-4-mini's unused 262,144
	{"sliding_window_pattern", 1024},          // Gemma 3: every 6th layer attends fully
	{"_sliding_window_pattern", 1024},         // the same, as gemma-3-270m-it spells it
	{"linear_num_key_heads", 1024},            // Qwen3.5's DeltaNet: 16
	{"linear_num_value_heads", 1024},          // 16 or 32
	{"linear_key_head_dim", 1024},             // 128
	{"linear_value_head_dim", 1024},           // 128
	{"linear_conv_kernel_dim", maxConvKernel}, // 4
}

// maxFFNWidth bounds the feed-forward width, configured or built (1,048,576).
const maxFFNWidth = 1 << 20

// maxFFNMultiplier bounds LFM2's block_ffn_dim_multiplier (1.0 in every release).
const maxFFNMultiplier = 16

// MaxParams is the largest parameter count accepted from safetensors headers or index
// metadata: 2^50 (about 1.1 × 10^15), a thousand times the largest open checkpoint and
// above what archBounds allow a computed count to reach, so sizing never overflows.
const MaxParams = 1 << 50

// checkSizes refuses an architecture number out of archBounds or not a whole number, KV
// heads that do not divide the attention heads, layer lists that disagree with
// num_hidden_layers, and an LFM2 feed-forward rule that gives no sane width.
func (c *Config) checkSizes() error {
	for _, b := range archBounds {
		if err := c.checkInt(b.key, b.max); err != nil {
			return err
		}
	}
	heads, hasHeads := c.Int("num_attention_heads")
	if kv, ok := c.Int("num_key_value_heads"); ok && hasHeads && heads%kv != 0 {
		return c.errorf("num_key_value_heads", "%d does not divide num_attention_heads %d: each key/value head serves a whole group of query heads", kv, heads)
	}
	layers, hasLayers := c.Int("num_hidden_layers")
	if err := c.checkLayerTypes(layers, hasLayers); err != nil {
		return err
	}
	if err := c.checkFullAttention(layers, hasLayers); err != nil {
		return err
	}
	return c.checkLFM2FFN()
}

// checkInt checks that key, when present, is a whole number in 1..max.
func (c *Config) checkInt(key string, max int64) error {
	v, ok := c.Text[key]
	if !ok || v == nil {
		return nil
	}
	if n, ok := asInt(v); ok {
		if n < 1 || n > max {
			return c.errorf(key, "%d is outside 1..%d", n, max)
		}
		return nil
	}
	if num, ok := v.(json.Number); ok {
		// a whole number too large for int64 (1e30), or one beyond float64 (1e400)
		if f, err := num.Float64(); err != nil || f == math.Trunc(f) {
			return c.errorf(key, "%s is outside 1..%d", num, max)
		}
	}
	return c.errorf(key, "is %s, not a whole number", describe(v))
}

func (c *Config) checkLayerTypes(layers int64, hasLayers bool) error {
	v, ok := c.Text["layer_types"]
	if !ok || v == nil {
		return nil
	}
	types, ok := c.Strings("layer_types")
	if !ok {
		return c.errorf("layer_types", "is %s, not a list of layer kinds", describe(v))
	}
	if hasLayers && int64(len(types)) != layers {
		return c.errorf("layer_types", "lists %d layers, and num_hidden_layers is %d", len(types), layers)
	}
	return nil
}

// checkFullAttention checks old LFM2 configs' full_attn_idxs, the attending layers'
// indexes, which normalize turns into layer_types.
func (c *Config) checkFullAttention(layers int64, hasLayers bool) error {
	v, ok := c.Text["full_attn_idxs"]
	if !ok || v == nil {
		return nil
	}
	idx, ok := v.([]any)
	if !ok {
		return c.errorf("full_attn_idxs", "is %s, not a list of layer indexes", describe(v))
	}
	for _, x := range idx {
		i, ok := asInt(x)
		switch {
		case !ok || i < 0:
			return c.errorf("full_attn_idxs", "lists %s, not a layer index", describe(x))
		case hasLayers && i >= layers:
			return c.errorf("full_attn_idxs", "lists %s, not a layer index below num_hidden_layers %d", describe(x), layers)
		}
	}
	return nil
}

// checkLFM2FFN checks that LFM2's block_auto_adjust_ff_dim rule gives a width in bounds.
func (c *Config) checkLFM2FFN() error {
	if c.String("model_type") != "lfm2" {
		return nil
	}
	if v, ok := c.Text["block_ffn_dim_multiplier"]; ok && v != nil {
		m, ok := c.Float("block_ffn_dim_multiplier")
		if !ok || !(m > 0 && m <= maxFFNMultiplier) {
			return c.errorf("block_ffn_dim_multiplier", "is %s, not a number in (0, %d]", describe(v), maxFFNMultiplier)
		}
	}
	key := "intermediate_size"
	if _, ok := c.Int("block_ff_dim"); ok {
		key = "block_ff_dim" // the rule starts from it when both are given
	}
	inter, ok := c.Int("intermediate_size")
	if !ok {
		inter, ok = c.Int("block_ff_dim")
	}
	if !ok {
		return nil
	}
	if w := lfm2FFNDim(c, inter); w < 1 || w > maxFFNWidth {
		return c.errorf(key, "with block_ffn_dim_multiplier and block_multiple_of gives a feed-forward width of %d, outside 1..%d", w, maxFFNWidth)
	}
	return nil
}

func (c *Config) errorf(key, format string, args ...any) error {
	if c.nested {
		key = "text_config." + key
	}
	return &ConfigError{File: c.File, Key: key, Problem: fmt.Sprintf(format, args...)}
}

// topErrorf is errorf for a key of the top level, which a wrapper names without the
// text_config prefix.
func (c *Config) topErrorf(key, format string, args ...any) error {
	return &ConfigError{File: c.File, Key: key, Problem: fmt.Sprintf(format, args...)}
}

// describe names a JSON value for an error sentence.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("%q", x)
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}
