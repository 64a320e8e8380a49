package family

import (
	"math"
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Llama's registered classes go by generation: llama3_2 for Llama 3's scaled RoPE (the class
// the pinned ExecuTorch gives rope_scale_factor 32, examples/models/llama/model.py), smollm2 for
// the unscaled SmolLM2.
const llamaScaledClass, llamaClass = "llama3_2", "smollm2"

func llamaPlan(scaling model.RopeScaling, attnBias bool, plan *LLMPlan) error {
	if attnBias {
		return refuse("attention_bias is set, and export_llm's Llama path has no attention biases")
	}
	plan.Converter = "llama"
	if scaling.Type == "" {
		plan.ModelClass = llamaClass
		setAll(plan.Params, "use_scaled_rope", false, "use_hf_rope", false, "attention_qkv_bias", false)
		return nil
	}
	if scaling.Type != "llama3" {
		return refuse("RoPE scaling %q: export_llm implements only Llama 3's", scaling.Type)
	}
	for _, n := range llama3Scaling(scaling) {
		if n.got == "" {
			return refuse("Llama 3 RoPE scaling without %s: export_llm's use_scaled_rope is fixed at %v", n.key, n.want)
		}
		// model checked that every scaling number parses
		if f, _ := strconv.ParseFloat(n.got, 64); math.Abs(f-n.want) > 1e-9 {
			return refuse("Llama 3 RoPE scaling with %s = %s: export_llm's use_scaled_rope is fixed at %v", n.key, n.got, n.want)
		}
	}
	plan.ModelClass = llamaScaledClass
	setAll(plan.Params, "use_scaled_rope", true, "use_hf_rope", false, "attention_qkv_bias", false)
	return nil
}

// scaleNumber is one number of a Llama 3 RoPE scaling: as written ("" when absent), and
// the only value export_llm's use_scaled_rope implements.
type scaleNumber struct {
	key, got string
	want     float64
}

// llama3Scaling lists the scaling's numbers in the order a refusal checks them.
func llama3Scaling(r model.RopeScaling) []scaleNumber {
	orig := ""
	if r.OriginalMaxPositions != 0 {
		orig = strconv.FormatInt(r.OriginalMaxPositions, 10)
	}
	return []scaleNumber{
		{"factor", r.Factor.String(), 32},
		{"low_freq_factor", r.LowFreqFactor.String(), 1},
		{"high_freq_factor", r.HighFreqFactor.String(), 4},
		{"original_max_position_embeddings", orig, 8192},
	}
}
