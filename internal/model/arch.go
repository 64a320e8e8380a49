package model

import (
	"fmt"
)

// Arch is everything the recipes and the sizing model read from config.json, decoded and
// checked once here: the Features, and the sizes that a config may leave to transformers'
// defaults, which is why an Arch can be missing while the Features are not.
type Arch struct {
	Features
	Layers       int64
	Heads        int64
	KVHeads      int64
	HeadDim      int64
	Vocab        int64
	Dim          int64
	Intermediate int64
	// FFNDim is the feed-forward width the model really builds: Intermediate, except for
	// LFM2's block_auto_adjust_ff_dim rule (LFM2.5-1.2B: 12,288 configured, 8,192 built).
	FFNDim int64
	Tied   bool
	// LayerTypes is the per-layer kind for hybrids ("conv", "full_attention"); nil when
	// every layer attends.
	LayerTypes []string
}

// sizes reads the architecture numbers for decode, after the Features f and normalize. A
// missing number is an error naming the key (Arch says why that is no refusal).
func (c *Config) sizes(f Features) (Arch, error) {
	a := Arch{Features: f}
	var err error
	need := func(key string) int64 {
		if err != nil {
			return 0
		}
		v, ok := c.Int(key)
		if !ok {
			err = fmt.Errorf("config.json has no positive integer %q", key)
		}
		return v
	}
	a.Layers = need("num_hidden_layers")
	a.Heads = need("num_attention_heads")
	a.Dim = need("hidden_size")
	a.Vocab = need("vocab_size")
	a.Intermediate = need("intermediate_size")
	if err != nil {
		return a, err
	}
	a.KVHeads = a.Heads
	if c.Has("num_key_value_heads") {
		a.KVHeads = need("num_key_value_heads")
	}
	if c.Has("head_dim") {
		a.HeadDim = need("head_dim")
	} else {
		if a.Dim%a.Heads != 0 {
			return a, fmt.Errorf("config.json has no head_dim and hidden_size %d is not divisible by num_attention_heads %d", a.Dim, a.Heads)
		}
		a.HeadDim = a.Dim / a.Heads
	}
	a.FFNDim = a.Intermediate
	if a.ModelType == "lfm2" {
		a.FFNDim = lfm2FFNDim(c, a.Intermediate)
	}
	a.Tied = true
	for _, k := range []string{"tie_word_embeddings", "tie_embedding"} {
		if v, ok := c.Bool(k); ok {
			a.Tied = v
			break
		}
	}
	if types, ok := c.Strings("layer_types"); ok {
		a.LayerTypes = types
	}
	return a, nil
}

// AttentionLayers counts the layers that attend (and so hold KV cache and a causal mask);
// it is Layers for models without layer_types. LFM2.5-1.2B: 6 of 16.
func (a Arch) AttentionLayers() int64 {
	if a.LayerTypes == nil {
		return a.Layers
	}
	var n int64
	for _, t := range a.LayerTypes {
		if t != "conv" {
			n++
		}
	}
	return n
}

// EmbeddingParams is vocab × dim.
func (a Arch) EmbeddingParams() int64 { return a.Vocab * a.Dim }

// LinearParams counts every linear the export quantizes, the output projection always as
// its own linear whatever the checkpoint stores. An attention layer holds q, k, v and o; a
// short-convolution layer (LFM2) its in_proj (dim → 3·dim) and out_proj instead; every
// layer a gated feed-forward of three matrices.
func (a Arch) LinearParams() int64 {
	q := a.Heads * a.HeadDim
	kv := a.KVHeads * a.HeadDim
	attn := a.Dim*q + 2*a.Dim*kv + q*a.Dim
	conv := 4 * a.Dim * a.Dim
	ffn := 3 * a.Dim * a.FFNDim
	nAttn := a.AttentionLayers()
	return nAttn*attn + (a.Layers-nAttn)*conv + a.Layers*ffn + a.Vocab*a.Dim
}

// lfm2FFNDim applies LFM2's block_auto_adjust_ff_dim: two thirds of block_ff_dim, times
// block_ffn_dim_multiplier, rounded up to block_multiple_of.
func lfm2FFNDim(c *Config, inter int64) int64 {
	if auto, _ := c.Bool("block_auto_adjust_ff_dim"); !auto {
		return inter
	}
	ff := inter
	if v, ok := c.Int("block_ff_dim"); ok {
		ff = v
	}
	ff = int64(2 * float64(ff) / 3)
	mult := 1.0
	if v, ok := c.Float("block_ffn_dim_multiplier"); ok {
		mult = v
	}
	ff = int64(mult * float64(ff))
	m := int64(256)
	if v, ok := c.Int("block_multiple_of"); ok && v > 0 {
		m = v
	}
	return m * ((ff + m - 1) / m)
}

// ComputedParams estimates the checkpoint's parameter count from the architecture, for
// when no safetensors header is at hand: the linears (the head once), the embedding again
// when the head is not tied to it, and the RMSNorm weights. Checkpoints that store a tied
// head twice (Qwen3-0.6B) hold vocab × dim more than this.
func (a Arch) ComputedParams() int64 {
	n := a.LinearParams() + a.Layers*2*a.Dim + a.Dim
	if !a.Tied {
		n += a.EmbeddingParams()
	}
	return n
}
