package family

import (
	"slices"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// qwen35Plan is Qwen3.5's text model, with the keys of ExecuTorch's own params files
// (examples/models/qwen3_5/config/*_config.json): HF's rotate-half RoPE over the first
// partial_rotary_factor of each head, qk-norm before RoPE, the output gate of the full
// attention layers (use_q_gate), the 1 + weight RMSNorm (rms_norm_add_unit_offset), and
// the gated DeltaNet's linear_* shapes with the per-layer kinds. ExecuTorch's files carry no
// ffn_dim_multiplier, so the RoPE table is the window once, as here. Text input gives
// mrope's three position streams the same position, which is plain RoPE.
func qwen35Plan(a model.Arch, plan *LLMPlan) error {
	if a.Rope.Type != "" {
		return refuse("RoPE scaling %q is not implemented by export_llm's Qwen3.5 path", a.Rope.Type)
	}
	if a.AttentionBias {
		return refuse("attention_bias is set, and export_llm's Qwen3.5 path has no attention biases")
	}
	if len(a.LayerTypes) != int(a.Layers) {
		return refuse("Qwen3.5 config has %d layer_types for %d layers", len(a.LayerTypes), a.Layers)
	}
	for i, t := range a.LayerTypes {
		if t != model.LayerLinear && t != "full_attention" {
			return refuse("layer %d is of type %q; export_llm's Qwen3.5 knows linear_attention and full_attention", i, t)
		}
	}
	d := a.DeltaNet
	if d.KeyHeads <= 0 || d.ValueHeads <= 0 || d.KeyHeadDim <= 0 || d.ValueHeadDim <= 0 || d.ConvKernel <= 0 {
		return refuse("Qwen3.5 config lacks the gated DeltaNet's linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim or linear_conv_kernel_dim")
	}
	if d.ValueHeads%d.KeyHeads != 0 {
		return refuse("%d DeltaNet value heads do not divide into %d key heads", d.ValueHeads, d.KeyHeads)
	}
	plan.ModelClass, plan.Converter, plan.HFRope = modelClass("qwen3_5", shapeOf(a, a.Intermediate)), "qwen3_5", true
	p := plan.Params
	delete(p, "ffn_dim_multiplier")
	types := slices.Clone(a.LayerTypes)
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false, "use_qk_norm", true,
		"qk_norm_before_rope", true, "attention_type", "mha", "use_q_gate", a.QGate, "rms_norm_add_unit_offset", true,
		"linear_conv_kernel_dim", d.ConvKernel, "linear_key_head_dim", d.KeyHeadDim, "linear_value_head_dim", d.ValueHeadDim,
		"linear_num_key_heads", d.KeyHeads, "linear_num_value_heads", d.ValueHeads, "layer_types", types)
	if a.PartialRotary != "" {
		p["partial_rotary_factor"] = a.PartialRotary
	}
	return nil
}
