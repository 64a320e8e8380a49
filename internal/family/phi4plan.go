package family

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// phi4miniPlan is Phi-4-mini's params, as ExecuTorch's own (examples/models/phi_4_mini/
// config/config.json) with one key left out. Phi keeps HF's rotate-half RoPE over the first
// partial_rotary_factor of each head (use_hf_rope; export_llm's other RoPE has no
// LongRoPE), and LongRoPE's factors go in as written: export_llm divides the frequencies by
// one list, and scales cos and sin by sqrt(1 + ln(max/original) / ln(original)), 1.19 for
// 131,072 / 4,096, as transformers does (docs/research/new-families.md, B).
//
// Which list is the catch. transformers picks per call: the short factors while the
// sequence is at most original_max_position_embeddings (4,096) long, the long ones past
// it. export_llm picks once, for the whole file, by the length of its RoPE table: the long
// factors when the table is longer than 4,096 positions. The table is the window, or twice
// the window when ffn_dim_multiplier is set (a key ExecuTorch's params carry and
// export_llm reads for nothing else once hidden_dim is given), so ExecuTorch's params file
// would switch a 4k file to the long factors. Left out, a window up to 4,096 gets the short
// factors at every position, as every conversation that fits it does in transformers;
// a larger window would rotate every prompt, the shortest included, by the long factors,
// which transformers uses only once a conversation passes 4,096 tokens. Those windows are
// not built (MaxWindow).
func phi4miniPlan(a model.Arch, plan *LLMPlan) error {
	if a.AttentionBias {
		return refuse("attention_bias is set, and export_llm's Phi-4-mini path has no attention biases")
	}
	plan.ModelClass, plan.Converter, plan.HFRope = modelClass("phi4mini", shapeOf(a, a.Intermediate)), "phi4mini", true
	p := plan.Params
	delete(p, "ffn_dim_multiplier")
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false)
	rotary := a.HeadDim
	if a.PartialRotary != "" {
		f, _ := strconv.ParseFloat(a.PartialRotary.String(), 64) // model checked it is in (0, 1]
		rotary = int64(float64(a.HeadDim) * f)                   // as ExecuTorch truncates it
		p["partial_rotary_factor"] = a.PartialRotary
	}
	r := a.Rope
	switch r.Type {
	case "":
		return nil
	case "longrope":
	default:
		return refuse("RoPE scaling %q: export_llm's Phi-4-mini path implements LongRoPE only", r.Type)
	}
	if r.OriginalMaxPositions == 0 || a.MaxPositions == 0 {
		return refuse("LongRoPE without original_max_position_embeddings and max_position_embeddings: export_llm could not tell when its long factors apply")
	}
	for _, l := range []struct {
		name    string
		factors []json.Number
	}{{"short_factor", r.ShortFactors}, {"long_factor", r.LongFactors}} {
		if int64(len(l.factors)) != rotary/2 {
			return refuse("LongRoPE %s has %d factors, and export_llm needs one per rotated pair: %d for %d rotated dimensions", l.name, len(l.factors), rotary/2, rotary)
		}
	}
	setAll(p, "rope_scaling_short_factor", slices.Clone(r.ShortFactors), "rope_scaling_long_factor", slices.Clone(r.LongFactors),
		"original_max_position_embeddings", r.OriginalMaxPositions, "max_position_embeddings", a.MaxPositions)
	plan.MaxWindow = int(r.OriginalMaxPositions)
	plan.WindowLimit = fmt.Sprintf("export_llm fixes LongRoPE's factors per file, and a longer window would rotate every position by the long factors, which transformers applies only once a conversation passes %s tokens (original_max_position_embeddings)",
		Commas(r.OriginalMaxPositions))
	return nil
}
