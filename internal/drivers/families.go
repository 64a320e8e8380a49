package drivers

import (
	"fmt"
	"strings"
)

// converter is one family's key map (docs/research/drivers.md#checkpoint-key-maps).
type converter struct {
	top   map[string]string
	layer map[string]string
	// unpermute: layer suffix → which head count undoes its rotate_half order.
	unpermute map[string]headCount
	// split: layer suffix → targets (LFM2's conv.in_proj into B, C and x), cut into equal
	// parts unless splitRows gives each part's rows.
	split map[string][]string
	// splitRows: layer suffix → the rows of each split target, for a fused tensor whose
	// parts differ in size (Phi's qkv_proj: the query is wider than the key and value
	// under grouped-query attention, so an even cut would misplace every row).
	splitRows map[string]func(a Arch) []int
	// textPrefix, when set, is where a multimodal checkpoint keeps the text model: a tensor
	// under it is mapped as if under "model.", and the textOnly parts are dropped.
	textPrefix string
	// perLayer is the exact tensor count of every layer; 0 means atLeast applies instead.
	perLayer int
	atLeast  int
}

type headCount int

const (
	queryHeads headCount = iota + 1
	kvHeads
)

// llamaLayer is the layer map the Llama-shaped families share.
var llamaLayer = map[string]string{
	"self_attn.q_proj.weight":         "attention.wq.weight",
	"self_attn.k_proj.weight":         "attention.wk.weight",
	"self_attn.v_proj.weight":         "attention.wv.weight",
	"self_attn.o_proj.weight":         "attention.wo.weight",
	"input_layernorm.weight":          "attention_norm.weight",
	"post_attention_layernorm.weight": "ffn_norm.weight",
	"mlp.gate_proj.weight":            "feed_forward.w1.weight",
	"mlp.down_proj.weight":            "feed_forward.w2.weight",
	"mlp.up_proj.weight":              "feed_forward.w3.weight",
}

var llamaTop = map[string]string{
	"model.embed_tokens.weight": embedTarget,
	"model.norm.weight":         "norm.weight",
	"lm_head.weight":            outputTarget,
}

func withExtras(base map[string]string, extras map[string]string) map[string]string {
	m := make(map[string]string, len(base)+len(extras))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range extras {
		m[k] = v
	}
	return m
}

var families = map[string]converter{
	"llama": {
		top:       llamaTop,
		layer:     llamaLayer,
		unpermute: map[string]headCount{"self_attn.q_proj.weight": queryHeads, "self_attn.k_proj.weight": kvHeads},
		perLayer:  9,
	},
	"qwen2_5": {
		top: llamaTop,
		layer: withExtras(llamaLayer, map[string]string{
			"self_attn.q_proj.bias": "attention.wq.bias",
			"self_attn.k_proj.bias": "attention.wk.bias",
			"self_attn.v_proj.bias": "attention.wv.bias",
		}),
		perLayer: 12,
	},
	"qwen3": {
		top: llamaTop,
		layer: withExtras(llamaLayer, map[string]string{
			"self_attn.q_norm.weight": "attention.q_norm_fn.weight",
			"self_attn.k_norm.weight": "attention.k_norm_fn.weight",
		}),
		perLayer: 11,
	},
	"lfm2": {
		top: map[string]string{
			"model.embed_tokens.weight":   embedTarget,
			"model.embedding_norm.weight": "norm.weight",
			"lm_head.weight":              outputTarget,
		},
		layer: map[string]string{
			"self_attn.q_proj.weight":      "attention.wq.weight",
			"self_attn.k_proj.weight":      "attention.wk.weight",
			"self_attn.v_proj.weight":      "attention.wv.weight",
			"self_attn.out_proj.weight":    "attention.wo.weight",
			"self_attn.q_layernorm.weight": "attention.q_norm_fn.weight",
			"self_attn.k_layernorm.weight": "attention.k_norm_fn.weight",
			"operator_norm.weight":         "attention_norm.weight",
			"ffn_norm.weight":              "ffn_norm.weight",
			"feed_forward.w1.weight":       "feed_forward.w1.weight",
			"feed_forward.w2.weight":       "feed_forward.w2.weight",
			"feed_forward.w3.weight":       "feed_forward.w3.weight",
			"conv.conv.weight":             "conv.conv.weight",
			"conv.out_proj.weight":         "conv.out_proj.weight",
		},
		split: map[string][]string{
			"conv.in_proj.weight": {"conv.B_proj.weight", "conv.C_proj.weight", "conv.x_proj.weight"},
		},
		atLeast: 6,
	},
	// Phi-4-mini (Phi3ForCausalLM) fuses q, k and v into qkv_proj and the gate and up
	// projections into gate_up_proj. ExecuTorch's own converter for it
	// (examples/models/phi_4_mini/convert_weights.py) imports torchtune, which the lock
	// cannot hold; this map does what its HF path does: qkv_proj cut by sizes (q is
	// heads × head_dim rows, k and v kv heads × head_dim each), gate_up_proj in two equal
	// halves, gate first (transformers' Phi3MLP: gate, up = gate_up.chunk(2)). Phi keeps
	// HF's rotate-half RoPE (use_hf_rope), so nothing is un-permuted.
	"phi4mini": {
		top: llamaTop,
		layer: map[string]string{
			"self_attn.o_proj.weight":         "attention.wo.weight",
			"input_layernorm.weight":          "attention_norm.weight",
			"post_attention_layernorm.weight": "ffn_norm.weight",
			"mlp.down_proj.weight":            "feed_forward.w2.weight",
		},
		split: map[string][]string{
			"self_attn.qkv_proj.weight": {"attention.wq.weight", "attention.wk.weight", "attention.wv.weight"},
			"mlp.gate_up_proj.weight":   {"feed_forward.w1.weight", "feed_forward.w3.weight"},
		},
		splitRows: map[string]func(a Arch) []int{
			"self_attn.qkv_proj.weight": func(a Arch) []int {
				return []int{a.Heads * a.HeadDim, a.KVHeads * a.HeadDim, a.KVHeads * a.HeadDim}
			},
		},
		perLayer: 6,
	},
	// Qwen3.5: a full-attention layer has 11 tensors, a linear-attention layer 14.
	"qwen3_5": {
		top:        llamaTop,
		layer:      qwen35Layer,
		textPrefix: qwen35TextPrefix,
		atLeast:    11,
	},
}

// qwen35Layer is Qwen3.5's text layer map, ExecuTorch's own (examples/models/qwen3_5/
// convert_weights.py): a full-attention layer is Qwen3's (its q_proj twice as wide, the
// query and its output gate), a linear-attention layer the gated DeltaNet's tensors under
// the same names. Qwen3.5 keeps HF's rotate-half RoPE, so nothing is un-permuted.
var qwen35Layer = withExtras(llamaLayer, map[string]string{
	"self_attn.q_norm.weight":        "attention.q_norm_fn.weight",
	"self_attn.k_norm.weight":        "attention.k_norm_fn.weight",
	"linear_attn.in_proj_qkv.weight": "attention.in_proj_qkv.weight",
	"linear_attn.in_proj_z.weight":   "attention.in_proj_z.weight",
	"linear_attn.in_proj_b.weight":   "attention.in_proj_b.weight",
	"linear_attn.in_proj_a.weight":   "attention.in_proj_a.weight",
	"linear_attn.conv1d.weight":      "attention.conv1d.weight",
	"linear_attn.dt_bias":            "attention.dt_bias",
	"linear_attn.A_log":              "attention.A_log",
	"linear_attn.norm.weight":        "attention.norm.weight",
	"linear_attn.out_proj.weight":    "attention.out_proj.weight",
})

// qwen35TextPrefix is where Qwen3.5's checkpoint (Qwen3_5ForConditionalGeneration) keeps
// the text model; textOnly are the prefixes of what the text export leaves behind: the
// vision tower and the multi-token-prediction head, as ExecuTorch's converter drops them.
const qwen35TextPrefix = "model.language_model."

var textOnly = []string{"model.visual.", "mtp."}

// rule maps one tensor name; layer is its layer index or -1.
func (f converter) rule(a Arch, name string) (Rule, int, error) {
	if f.textPrefix != "" {
		for _, p := range textOnly {
			if strings.HasPrefix(name, p) {
				return Rule{Ignore: true}, -1, nil
			}
		}
		if rest, ok := strings.CutPrefix(name, f.textPrefix); ok {
			name = "model." + rest
		}
	}
	for _, suf := range ignoredSuffixes {
		if strings.HasSuffix(name, suf) {
			layer, _, _, _ := splitLayer(name)
			return Rule{Ignore: true}, layer, nil
		}
	}
	if to, ok := f.top[name]; ok {
		return Rule{To: to}, -1, nil
	}
	layer, suffix, ok, err := splitLayer(name)
	if err != nil {
		return Rule{}, -1, err
	}
	if !ok {
		return Rule{}, -1, fmt.Errorf("conversion plan for %s: unknown tensor %s", a.Family, name)
	}
	if layer >= a.Layers {
		return Rule{}, -1, fmt.Errorf("conversion plan for %s: tensor %s is in layer %d, the model has %d", a.Family, name, layer, a.Layers)
	}
	prefix := fmt.Sprintf("layers.%d.", layer)
	if parts, ok := f.split[suffix]; ok {
		r := Rule{}
		for _, p := range parts {
			r.Split = append(r.Split, prefix+p)
		}
		if rows, ok := f.splitRows[suffix]; ok {
			if a.HeadDim <= 0 {
				return Rule{}, -1, fmt.Errorf("conversion plan for %s: tensor %s is cut by head_dim, which is %d", a.Family, name, a.HeadDim)
			}
			r.Rows = rows(a)
		}
		return r, layer, nil
	}
	to, ok := f.layer[suffix]
	if !ok {
		return Rule{}, -1, fmt.Errorf("conversion plan for %s: unknown tensor %s", a.Family, name)
	}
	r := Rule{To: prefix + to}
	switch f.unpermute[suffix] {
	case queryHeads:
		r.Unpermute = a.Heads
	case kvHeads:
		r.Unpermute = a.KVHeads
	}
	return r, layer, nil
}

// checkLayers makes sure every layer is there and complete, so a truncated or mixed
// checkpoint stops before torch loads anything.
func (f converter) checkLayers(a Arch, perLayer map[int]int) error {
	if len(perLayer) != a.Layers {
		return fmt.Errorf("conversion plan for %s: tensors cover %d layers, config says %d", a.Family, len(perLayer), a.Layers)
	}
	for _, l := range sortedLayers(perLayer) {
		n := perLayer[l]
		if f.perLayer > 0 && n != f.perLayer {
			return fmt.Errorf("conversion plan for %s: layer %d has %d tensors, want %d", a.Family, l, n, f.perLayer)
		}
		if f.atLeast > 0 && n < f.atLeast {
			return fmt.Errorf("conversion plan for %s: layer %d has %d tensors, want at least %d", a.Family, l, n, f.atLeast)
		}
	}
	return nil
}
