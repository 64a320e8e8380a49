package family

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// LLMPlan is what export_llm needs for a family: the model class (ModelClass, see
// LLMClasses), the checkpoint converter, and the params JSON that defines the architecture.
type LLMPlan struct {
	ModelClass string         `json:"model_class"`
	Converter  string         `json:"converter"`
	Params     map[string]any `json:"params"`
	// HFRope is true when the model keeps Hugging Face's rotate-half RoPE layout.
	HFRope bool `json:"hf_rope"`
	// MaxWindow, when set, is the largest window the params export faithfully, and
	// WindowLimit why: export_llm fixes in the file what transformers decides per call
	// (Phi-4-mini's LongRoPE factors, phi4miniPlan). A window above it is skipped by plan
	// and refused by export, never built.
	MaxWindow   int    `json:"max_window,omitempty"`
	WindowLimit string `json:"window_limit,omitempty"`
}

// Unsupported is a refusal: the sentence says why, in words a user understands.
type Unsupported struct{ Reason string }

func (u *Unsupported) Error() string { return u.Reason }

func refuse(format string, args ...any) error {
	return &Unsupported{Reason: fmt.Sprintf(format, args...)}
}

// XNNPACKPlan builds the export_llm plan shared by XNNPACK and Vulkan, or refuses.
func XNNPACKPlan(f *Family, c *model.Config) (*LLMPlan, error) {
	a, err := c.Arch()
	if err != nil {
		return nil, refuse("%v", err)
	}
	if a.HiddenAct != "" && a.HiddenAct != "silu" {
		return nil, refuse("hidden_act %q: export_llm's feed-forward is SiLU only", a.HiddenAct)
	}
	if a.SlidingWindow {
		return nil, refuse("the config enables sliding-window attention, which export_llm's KV cache does not implement")
	}
	if a.MLPBias {
		return nil, refuse("the feed-forward has biases (mlp_bias), which export_llm's model has no place for")
	}
	if a.RopeTheta == "" {
		return nil, refuse("config has no rope_theta")
	}
	if a.NormEps == "" {
		return nil, refuse("config has no rms_norm_eps")
	}
	p := map[string]any{
		"dim": a.Dim, "ffn_dim_multiplier": 1, "hidden_dim": a.Intermediate, "n_heads": a.Heads,
		"head_dim": a.HeadDim, "n_kv_heads": a.KVHeads, "n_layers": a.Layers, "norm_eps": a.NormEps,
		"rope_theta": a.RopeTheta, "vocab_size": a.Vocab,
	}
	plan := &LLMPlan{Params: p}
	scaling := a.Rope
	switch f.Key {
	case "qwen3":
		if scaling.Type != "" {
			return nil, refuse("RoPE scaling %q is not implemented by export_llm's Qwen3 path", scaling.Type)
		}
		if a.AttentionBias {
			return nil, refuse("attention_bias is set, and the Qwen3 path has no attention biases")
		}
		plan.ModelClass, plan.Converter, plan.HFRope = modelClass(f.Key, shapeOf(a, a.Intermediate)), "qwen3", true
		setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false, "use_qk_norm", true, "qk_norm_before_rope", true)
	case "qwen2_5":
		if scaling.Type != "" {
			return nil, refuse("RoPE scaling %q is not implemented by export_llm's Qwen2.5 path", scaling.Type)
		}
		plan.ModelClass, plan.Converter, plan.HFRope = modelClass(f.Key, shapeOf(a, a.Intermediate)), "qwen2", true
		setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", true)
	case "lfm2":
		if err := lfm2Plan(a, plan); err != nil {
			return nil, err
		}
	case "llama":
		if err := llamaPlan(scaling, a.AttentionBias, plan); err != nil {
			return nil, err
		}
	case "phi4mini":
		if err := phi4miniPlan(a, plan); err != nil {
			return nil, err
		}
	case "qwen3_5":
		if err := qwen35Plan(a, plan); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("family %s has no export_llm recipe", f.Key)
	}
	return plan, nil
}
