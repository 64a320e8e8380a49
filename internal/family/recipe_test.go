package family_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snap loads a snapshot model whose config the case then spoils.
func snap(t *testing.T, id string) *model.Source {
	t.Helper()
	src, err := snapshot.Load(context.Background(), id)
	require.NoError(t, err)
	return src
}

// TestLlamaScalingRefusals: export_llm's use_scaled_rope is Llama 3's scaling with fixed
// numbers, so any other number, a missing one, or another type is refused, naming the
// first number off in a fixed order.
func TestLlamaScalingRefusals(t *testing.T) {
	llama3 := func() map[string]any {
		return map[string]any{"rope_type": "llama3", "factor": json.Number("32.0"), "low_freq_factor": json.Number("1.0"),
			"high_freq_factor": json.Number("4.0"), "original_max_position_embeddings": json.Number("8192")}
	}
	tests := []struct {
		name   string
		spoil  func(text map[string]any)
		class  string // the plan's model class when accepted
		refuse string // the refusal otherwise
	}{
		{name: "as published", spoil: func(map[string]any) {}, class: "llama3_2"},
		{name: "no scaling", spoil: func(m map[string]any) { m["rope_scaling"] = nil }, class: "smollm2"},
		{name: "transformers v5 rope_parameters", spoil: func(m map[string]any) {
			m["rope_parameters"], m["rope_scaling"] = llama3(), nil
		}, class: "llama3_2"},
		{name: "factor", spoil: func(m map[string]any) { m["rope_scaling"].(map[string]any)["factor"] = json.Number("8.0") },
			refuse: "Llama 3 RoPE scaling with factor = 8.0: export_llm's use_scaled_rope is fixed at 32"},
		{name: "two numbers off", spoil: func(m map[string]any) {
			s := m["rope_scaling"].(map[string]any)
			s["high_freq_factor"], s["original_max_position_embeddings"] = json.Number("2"), json.Number("4096")
		}, refuse: "Llama 3 RoPE scaling with high_freq_factor = 2: export_llm's use_scaled_rope is fixed at 4"},
		{name: "original length off", spoil: func(m map[string]any) {
			m["rope_scaling"].(map[string]any)["original_max_position_embeddings"] = json.Number("4096")
		}, refuse: "Llama 3 RoPE scaling with original_max_position_embeddings = 4096: export_llm's use_scaled_rope is fixed at 8192"},
		{name: "missing number", spoil: func(m map[string]any) { delete(m["rope_scaling"].(map[string]any), "low_freq_factor") },
			refuse: "Llama 3 RoPE scaling without low_freq_factor: export_llm's use_scaled_rope is fixed at 1"},
		{name: "another type", spoil: func(m map[string]any) {
			m["rope_scaling"] = map[string]any{"type": "dynamic", "factor": json.Number("2.0")}
		},
			refuse: `RoPE scaling "dynamic": export_llm implements only Llama 3's`},
		{name: "impossible factor", spoil: func(m map[string]any) { m["rope_scaling"].(map[string]any)["factor"] = "32" },
			refuse: `meta-llama/Llama-3.2-1B-Instruct/config.json: rope_scaling.factor is "32", not a number`},
		{name: "attention biases", spoil: func(m map[string]any) { m["attention_bias"] = true },
			refuse: "attention_bias is set, and export_llm's Llama path has no attention biases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := snap(t, "meta-llama/Llama-3.2-1B-Instruct")
			src.Config.Edit(tc.spoil)
			p, err := family.XNNPACKPlan(family.ByKey("llama"), src.Config)
			if tc.refuse != "" {
				require.Error(t, err)
				assert.Equal(t, tc.refuse, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.class, p.ModelClass)
			assert.Equal(t, tc.class == "llama3_2", p.Params["use_scaled_rope"])
		})
	}
}

// TestParamsKeepWrittenNumbers: rope_theta and the norm eps reach the params JSON as the
// checkpoint writes them, whichever key holds them.
func TestParamsKeepWrittenNumbers(t *testing.T) {
	tests := []struct {
		name, id   string
		spoil      func(text map[string]any)
		theta, eps string
		refuse     string
	}{
		{name: "qwen3", id: "Qwen/Qwen3-1.7B", spoil: func(map[string]any) {}, theta: "1000000", eps: "1e-06"},
		{name: "exponent form", id: "Qwen/Qwen3-1.7B", spoil: func(m map[string]any) { m["rope_theta"] = json.Number("1e6") }, theta: "1e6", eps: "1e-06"},
		{name: "qwen2.5 decimal form", id: "Qwen/Qwen2.5-1.5B", spoil: func(map[string]any) {}, theta: "1000000.0", eps: "1e-06"},
		{name: "lfm2 norm_eps", id: "LiquidAI/LFM2.5-1.2B-Base", spoil: func(map[string]any) {}, theta: "1000000.0", eps: "1e-05"},
		{name: "transformers v5 theta", id: "Qwen/Qwen3-1.7B", spoil: func(m map[string]any) {
			delete(m, "rope_theta")
			m["rope_parameters"] = map[string]any{"rope_type": "default", "rope_theta": json.Number("5e5")}
		}, theta: "5e5", eps: "1e-06"},
		{name: "no theta", id: "Qwen/Qwen3-1.7B", spoil: func(m map[string]any) { delete(m, "rope_theta") }, refuse: "config has no rope_theta"},
		{name: "no eps", id: "Qwen/Qwen3-1.7B", spoil: func(m map[string]any) { delete(m, "rms_norm_eps") }, refuse: "config has no rms_norm_eps"},
		{name: "activation", id: "Qwen/Qwen3-1.7B", spoil: func(m map[string]any) { m["hidden_act"] = "gelu" },
			refuse: `hidden_act "gelu": export_llm's feed-forward is SiLU only`},
		{name: "mlp_bias", id: "Qwen/Qwen3-1.7B", spoil: func(m map[string]any) { m["mlp_bias"] = true },
			refuse: "the feed-forward has biases (mlp_bias), which export_llm's model has no place for"},
		{name: "conv_bias", id: "LiquidAI/LFM2.5-1.2B-Base", spoil: func(m map[string]any) { m["conv_bias"] = true },
			refuse: "conv_bias is set, and export_llm's LFM2 short convolution has no bias"},
		{name: "lfm2 scaling", id: "LiquidAI/LFM2.5-1.2B-Base", spoil: func(m map[string]any) {
			m["rope_scaling"] = map[string]any{"rope_type": "linear", "factor": json.Number("2")}
		}, refuse: `RoPE scaling "linear" is not implemented by export_llm's LFM2 path`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := snap(t, tc.id)
			src.Config.Edit(tc.spoil)
			p, err := family.XNNPACKPlan(family.ByArchitecture(src.Config.Architectures()), src.Config)
			if tc.refuse != "" {
				require.Error(t, err)
				assert.Equal(t, tc.refuse, err.Error())
				return
			}
			require.NoError(t, err)
			b, err := json.Marshal(map[string]any{"rope_theta": p.Params["rope_theta"], "norm_eps": p.Params["norm_eps"]})
			require.NoError(t, err)
			assert.Equal(t, `{"norm_eps":`+tc.eps+`,"rope_theta":`+tc.theta+`}`, string(b), "the written form is kept")
		})
	}
}

// TestMediaTekReadsModelType: the MediaTek scripts are chosen by model_type, text_config's
// before the top level's.
func TestMediaTekReadsModelType(t *testing.T) {
	src := snap(t, "Qwen/Qwen3-0.6B")
	src.Config.Edit(func(text map[string]any) { text["model_type"] = "qwen2" })
	_, err := family.MediaTekPlan(family.ByKey("qwen3"), src.Config, 4)
	require.Error(t, err)
	assert.Equal(t, `model_type "qwen2", the MediaTek qwen.py path expects "qwen3"`, err.Error())

	src = snap(t, "Qwen/Qwen3-0.6B")
	src.Config.Edit(func(text map[string]any) {
		text["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": json.Number("32")}
	})
	_, err = family.MediaTekPlan(family.ByKey("qwen3"), src.Config, 4)
	require.Error(t, err)
	assert.Equal(t, `RoPE scaling "llama3" is not validated on the MediaTek scripts`, err.Error())
}

// TestPhi4MiniPlan: Phi-4-mini's LongRoPE reaches the params as ExecuTorch's own file
// writes it, without ffn_dim_multiplier, and the plan caps the window at
// original_max_position_embeddings, above which export_llm would apply the long factors
// to every position; what export_llm cannot build is refused by name.
func TestPhi4MiniPlan(t *testing.T) {
	tests := []struct {
		name      string
		spoil     func(text map[string]any)
		maxWindow int
		refuse    string
	}{
		{name: "as published", spoil: func(map[string]any) {}, maxWindow: 4096},
		{name: "another original length", spoil: func(m map[string]any) { m["original_max_position_embeddings"] = json.Number("8192") },
			maxWindow: 8192},
		{name: "no scaling", spoil: func(m map[string]any) { m["rope_scaling"] = nil }},
		{name: "another scaling", spoil: func(m map[string]any) {
			m["rope_scaling"] = map[string]any{"type": "yarn", "factor": json.Number("4.0")}
		}, refuse: `RoPE scaling "yarn": export_llm's Phi-4-mini path implements LongRoPE only`},
		{name: "factors for another rotation", spoil: func(m map[string]any) { m["partial_rotary_factor"] = json.Number("0.5") },
			refuse: "LongRoPE short_factor has 48 factors, and export_llm needs one per rotated pair: 32 for 64 rotated dimensions"},
		{name: "no original length", spoil: func(m map[string]any) { delete(m, "original_max_position_embeddings") },
			refuse: "LongRoPE without original_max_position_embeddings and max_position_embeddings: export_llm could not tell when its long factors apply"},
		{name: "attention biases", spoil: func(m map[string]any) { m["attention_bias"] = true },
			refuse: "attention_bias is set, and export_llm's Phi-4-mini path has no attention biases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := snap(t, "microsoft/Phi-4-mini-instruct")
			src.Config.Edit(tc.spoil)
			p, err := family.XNNPACKPlan(family.ByKey("phi4mini"), src.Config)
			if tc.refuse != "" {
				require.Error(t, err)
				assert.Equal(t, tc.refuse, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "phi_4_mini", p.ModelClass)
			assert.Equal(t, "phi4mini", p.Converter)
			assert.True(t, p.HFRope)
			assert.NotContains(t, p.Params, "ffn_dim_multiplier", "it would double the RoPE table and pick the long factors at 4k")
			assert.Equal(t, json.Number("0.75"), p.Params["partial_rotary_factor"])
			assert.Equal(t, tc.maxWindow, p.MaxWindow)
			if tc.maxWindow == 0 {
				assert.NotContains(t, p.Params, "rope_scaling_long_factor")
				assert.Empty(t, p.WindowLimit)
				return
			}
			assert.Len(t, p.Params["rope_scaling_short_factor"], 48)
			assert.Len(t, p.Params["rope_scaling_long_factor"], 48)
			assert.EqualValues(t, 131072, p.Params["max_position_embeddings"])
			assert.Contains(t, p.WindowLimit, "a longer window would rotate every position by the long factors")
		})
	}
}
