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
	// LayerTypes is the per-layer kind for hybrids ("conv", "full_attention",
	// "linear_attention", "sliding_attention"); nil when every layer attends over the whole
	// window. Gemma 3 configs that give only sliding_window_pattern get the list transformers
	// derives from it (normalize).
	LayerTypes []string
	// SlidingWindowLen is sliding_window, the span a sliding_attention layer attends over
	// (Gemma 3: 512); 0 when no layer slides, whatever sliding_window says (Qwen and Phi
	// configs carry one that no layer uses).
	SlidingWindowLen int64
	// DeltaNet is the gated DeltaNet of Qwen3.5's linear_attention layers; zero otherwise.
	DeltaNet DeltaNet
}

// DeltaNet is the shape of a gated DeltaNet layer (linear_* keys of Qwen3.5's text_config).
type DeltaNet struct {
	KeyHeads, ValueHeads     int64
	KeyHeadDim, ValueHeadDim int64
	// ConvKernel is linear_conv_kernel_dim, the causal depthwise convolution's length.
	ConvKernel int64
}

// Layer kinds of layer_types that do not keep a KV cache, and the one whose cache is capped
// at the sliding window.
const (
	LayerConv    = "conv"
	LayerLinear  = "linear_attention"
	LayerSliding = "sliding_attention"
)

// ConvDim is the width of the DeltaNet's q, k and v projections together, which its
// convolution runs over: 2 × key heads × key head_dim + value heads × value head_dim.
func (d DeltaNet) ConvDim() int64 {
	return 2*d.KeyHeads*d.KeyHeadDim + d.ValueHeads*d.ValueHeadDim
}

// ValueDim is value heads × value head_dim, the width of the gate and of the output.
func (d DeltaNet) ValueDim() int64 { return d.ValueHeads * d.ValueHeadDim }

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
	if n := a.count(LayerSliding); n > 0 {
		if !c.Has("sliding_window") {
			return a, fmt.Errorf("config.json lists %d sliding_attention layers in layer_types and no positive integer \"sliding_window\", the span they attend over: "+
				"transformers gives them its model class's default span (Gemma 3: 4,096) or fails on a null, so their ring caches cannot be sized", n)
		}
		a.SlidingWindowLen, _ = c.Int("sliding_window")
	}
	if a.count(LayerLinear) > 0 {
		a.DeltaNet = DeltaNet{KeyHeads: need("linear_num_key_heads"), ValueHeads: need("linear_num_value_heads"),
			KeyHeadDim: need("linear_key_head_dim"), ValueHeadDim: need("linear_value_head_dim"), ConvKernel: need("linear_conv_kernel_dim")}
	}
	return a, err
}

// count is how many layers layer_types gives kind.
func (a Arch) count(kind string) int64 {
	var n int64
	for _, t := range a.LayerTypes {
		if t == kind {
			n++
		}
	}
	return n
}

// AttentionLayers counts the layers that attend with softmax attention (and so hold a KV
// cache and a causal mask): every layer but LFM2's short convolutions and Qwen3.5's
// DeltaNet layers, whose state is fixed (DeltaNetLayers). It is Layers for models without
// layer_types. LFM2.5-1.2B: 6 of 16; Qwen3.5-0.8B: 6 of 24.
func (a Arch) AttentionLayers() int64 {
	if a.LayerTypes == nil {
		return a.Layers
	}
	return int64(len(a.LayerTypes)) - a.count(LayerConv) - a.count(LayerLinear)
}

// SlidingLayers counts the attending layers whose cache is capped at the sliding window
// (Gemma 3: 22 of 26). A config that lists sliding layers and no sliding_window has no Arch
// (sizes refuses it); an Arch built in code without a window counts none, so sizing gives
// those layers a cache over the whole window rather than none.
func (a Arch) SlidingLayers() int64 {
	if a.SlidingWindowLen == 0 {
		return 0
	}
	return a.count(LayerSliding)
}

// DeltaNetLayers counts Qwen3.5's linear_attention layers.
func (a Arch) DeltaNetLayers() int64 { return a.count(LayerLinear) }

// EmbeddingParams is vocab × dim.
func (a Arch) EmbeddingParams() int64 { return a.Vocab * a.Dim }

// LinearParams counts every linear the export quantizes, the output projection always as
// its own linear whatever the checkpoint stores. An attention layer holds q, k, v and o (q
// twice as wide with Qwen3.5's output gate); a short-convolution layer (LFM2) its in_proj
// (dim → 3·dim) and out_proj instead; a DeltaNet layer (Qwen3.5) its in_proj_qkv, in_proj_z,
// in_proj_a, in_proj_b and out_proj; every layer a gated feed-forward of three matrices.
func (a Arch) LinearParams() int64 {
	q := a.Heads * a.HeadDim
	kv := a.KVHeads * a.HeadDim
	wq := a.Dim * q
	if a.QGate {
		wq *= 2
	}
	attn := wq + 2*a.Dim*kv + q*a.Dim
	conv := 4 * a.Dim * a.Dim
	d := a.DeltaNet
	delta := a.Dim*d.ConvDim() + a.Dim*d.ValueDim() + 2*a.Dim*d.ValueHeads + d.ValueDim()*a.Dim
	ffn := 3 * a.Dim * a.FFNDim
	nAttn, nDelta := a.AttentionLayers(), a.DeltaNetLayers()
	return nAttn*attn + nDelta*delta + (a.Layers-nAttn-nDelta)*conv + a.Layers*ffn + a.Vocab*a.Dim
}

// DeltaNetExtraParams are a DeltaNet layer's weights besides its linears, which the export
// keeps unquantized: the depthwise convolution (conv_dim × kernel), and per value head
// A_log and dt_bias, and the gated norm's value head_dim weights.
func (a Arch) DeltaNetExtraParams() int64 {
	d := a.DeltaNet
	return a.DeltaNetLayers() * (d.ConvDim()*d.ConvKernel + 2*d.ValueHeads + d.ValueHeadDim)
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
	n := a.LinearParams() + a.DeltaNetExtraParams() + a.Layers*2*a.Dim + a.Dim
	if !a.Tied {
		n += a.EmbeddingParams()
	}
	return n
}
