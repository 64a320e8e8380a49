package family

import (
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// LFM2ConvKernel is the short convolution's kernel length (conv_L_cache) that the pinned
// ExecuTorch builds, and the one every LFM2 release uses; a config asking for another is refused
// rather than exported with a kernel that drops or invents taps.
const LFM2ConvKernel = 3

func lfm2Plan(a model.Arch, plan *LLMPlan) error {
	if a.Rope.Type != "" {
		return refuse("RoPE scaling %q is not implemented by export_llm's LFM2 path", a.Rope.Type)
	}
	if a.LayerTypes == nil {
		return refuse("LFM2 config has no layer_types (nor full_attn_idxs)")
	}
	for i, t := range a.LayerTypes {
		if t != "conv" && t != "full_attention" {
			return refuse("layer %d is of type %q; export_llm's LFM2 knows conv and full_attention", i, t)
		}
	}
	if a.ConvBias {
		return refuse("conv_bias is set, and export_llm's LFM2 short convolution has no bias")
	}
	// The pinned ExecuTorch hard-codes the kernel (examples/models/lfm2/short_conv.py:92,
	// "self.L_cache = 3  # hardcode 3 for now"); absent means transformers' default, 3.
	if k := a.ConvLCache; k != 0 && k != LFM2ConvKernel {
		return refuse("conv_L_cache is %d, and export_llm builds LFM2's short convolution with a kernel of %d", k, LFM2ConvKernel)
	}
	plan.ModelClass, plan.Converter, plan.HFRope = modelClass("lfm2", shapeOf(a, a.FFNDim)), "lfm2", true
	p := plan.Params
	p["hidden_dim"] = a.FFNDim
	delete(p, "head_dim")
	types := make([]string, len(a.LayerTypes))
	copy(types, a.LayerTypes)
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "use_qk_norm", true, "qk_norm_before_rope", true, "layer_types", types)
	return nil
}
