package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFeatures(t *testing.T) {
	tests := []struct {
		name, json string
		want       model.Features
	}{
		{"missing", `{}`, model.Features{}},
		{"nulls are absent", `{"model_type":null,"hidden_act":null,"rope_theta":null,"rms_norm_eps":null,"rope_scaling":null,"attention_bias":null,"num_experts":null}`, model.Features{}},
		{"qwen3", `{"model_type":"qwen3","hidden_act":"silu","rope_theta":1000000,"rms_norm_eps":1e-06,"rope_scaling":null,"attention_bias":false,"use_sliding_window":false,"max_position_embeddings":40960}`,
			model.Features{ModelType: "qwen3", HiddenAct: "silu", RopeTheta: "1000000", NormEps: "1e-06", MaxPositions: 40960}},
		{"written form kept", `{"rope_theta":1000000.0,"rms_norm_eps":0.00001}`, model.Features{RopeTheta: "1000000.0", NormEps: "0.00001"}},
		{"lfm2 norm_eps", `{"model_type":"lfm2","norm_eps":1e-05,"conv_bias":true}`, model.Features{ModelType: "lfm2", NormEps: "1e-05", ConvBias: true}},
		{"lfm2 conv kernel", `{"model_type":"lfm2","conv_L_cache":3}`, model.Features{ModelType: "lfm2", ConvLCache: 3}},
		{"conv kernel written as a decimal", `{"conv_L_cache":4.0}`, model.Features{ConvLCache: 4}},
		{"conv kernel null", `{"conv_L_cache":null}`, model.Features{}},
		{"rms_norm_eps first", `{"rms_norm_eps":1e-6,"norm_eps":1e-5}`, model.Features{NormEps: "1e-6"}},
		{"biases and sliding window", `{"attention_bias":true,"mlp_bias":true,"use_sliding_window":true,"sliding_window":4096}`,
			model.Features{AttentionBias: true, MLPBias: true, SlidingWindow: true}},
		{"llama3 scaling", `{"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,"low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}}`,
			model.Features{Rope: model.RopeScaling{Type: "llama3", Factor: "32.0", LowFreqFactor: "1.0", HighFreqFactor: "4.0", OriginalMaxPositions: 8192}}},
		{"older type key", `{"rope_scaling":{"type":"linear","factor":8}}`, model.Features{Rope: model.RopeScaling{Type: "linear", Factor: "8"}}},
		{"empty rope_type falls back to type", `{"rope_scaling":{"rope_type":"","type":"yarn"}}`, model.Features{Rope: model.RopeScaling{Type: "yarn"}}},
		{"default scaling is none", `{"rope_scaling":{"rope_type":"default","factor":1.0}}`, model.Features{}},
		{"untyped scaling is none", `{"rope_scaling":{"factor":2.0}}`, model.Features{}},
		{"rope_parameters after a default rope_scaling", `{"rope_scaling":{"rope_type":"default"},"rope_parameters":{"rope_type":"yarn","factor":4.0,"rope_theta":10000}}`,
			model.Features{RopeTheta: "10000", Rope: model.RopeScaling{Type: "yarn", Factor: "4.0"}}},
		{"transformers v5 theta", `{"rope_parameters":{"rope_type":"default","rope_theta":1000000}}`, model.Features{RopeTheta: "1000000"}},
		{"rope_theta before rope_parameters", `{"rope_theta":500000.0,"rope_parameters":{"rope_theta":1000000}}`, model.Features{RopeTheta: "500000.0"}},
		{"experts", `{"num_experts":128,"moe_intermediate_size":768}`, model.Features{Experts: true}},
		{"local experts", `{"num_local_experts":16}`, model.Features{Experts: true}},
		{"experts as a string", `{"n_routed_experts":"8"}`, model.Features{Experts: true}},
		{"experts off", `{"num_experts":0,"num_local_experts":false}`, model.Features{}},
		{"vision", `{"vision_config":{}}`, model.Features{Vision: true}},
		{"vision null", `{"vision_config":null}`, model.Features{Vision: true}},
		{"quantized", `{"quantization_config":{"quant_method":"fp8"}}`, model.Features{Quantized: true, QuantMethod: "fp8"}},
		{"quantized without method", `{"quantization_config":{}}`, model.Features{Quantized: true}},
		{"quantization not an object", `{"quantization_config":"fp8"}`, model.Features{}},
		{"text_config first", `{"model_type":"gemma3","vision_config":{},"text_config":{"model_type":"gemma3_text","rope_theta":1000000}}`,
			model.Features{ModelType: "gemma3_text", RopeTheta: "1000000", Vision: true}},
		{"wrapper's model_type", `{"model_type":"wrapper","text_config":{"rope_theta":1000000}}`, model.Features{ModelType: "wrapper", RopeTheta: "1000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := model.ParseConfig("c", []byte(tc.json))
			require.NoError(t, err)
			got, err := c.Features()
			require.NoError(t, err)
			assert.Empty(t, cmp.Diff(tc.want, got))
		})
	}
}

func TestParseConfigRefusesImpossibleFeatures(t *testing.T) {
	tests := []struct {
		name, json string
		key, want  string
	}{
		{"model_type", `{"model_type":3}`, "model_type", "is 3, not a name"},
		{"hidden_act", `{"hidden_act":["silu"]}`, "hidden_act", "is a list, not a name"},
		{"nested model_type", `{"text_config":{"model_type":true}}`, "text_config.model_type", "is true, not a name"},
		{"wrapper's model_type", `{"model_type":{},"text_config":{}}`, "model_type", "is an object, not a name"},
		{"attention_bias", `{"attention_bias":"yes"}`, "attention_bias", `is "yes", not true or false`},
		{"mlp_bias", `{"mlp_bias":1}`, "mlp_bias", "is 1, not true or false"},
		{"conv_bias", `{"conv_bias":"false"}`, "conv_bias", `is "false", not true or false`},
		{"conv_L_cache zero", `{"conv_L_cache":0}`, "conv_L_cache", "is 0, not a whole number in 1..1024"},
		{"conv_L_cache fraction", `{"conv_L_cache":2.5}`, "conv_L_cache", "is 2.5, not a whole number in 1..1024"},
		{"conv_L_cache string", `{"conv_L_cache":"3"}`, "conv_L_cache", `is "3", not a whole number in 1..1024`},
		{"conv_L_cache huge", `{"conv_L_cache":1e30}`, "conv_L_cache", "is 1e30, not a whole number in 1..1024"},
		{"use_sliding_window", `{"use_sliding_window":0}`, "use_sliding_window", "is 0, not true or false"},
		{"rope_theta string", `{"rope_theta":"1e6"}`, "rope_theta", `is "1e6", not a number`},
		{"rope_theta negative", `{"rope_theta":-10000}`, "rope_theta", "is -10000, not a number in (0, 1e12]"},
		{"rope_theta zero", `{"rope_theta":0}`, "rope_theta", "is 0, not a number in (0, 1e12]"},
		{"rope_theta huge", `{"rope_theta":1e13}`, "rope_theta", "is 1e13, not a number in (0, 1e12]"},
		{"rope_theta beyond float64", `{"rope_theta":1e400}`, "rope_theta", "is 1e400, not a number in (0, 1e12]"},
		{"rms_norm_eps", `{"rms_norm_eps":1}`, "rms_norm_eps", "is 1, not a number in [0, 1)"},
		{"norm_eps", `{"norm_eps":-1e-5}`, "norm_eps", "is -1e-5, not a number in [0, 1)"},
		{"rope_scaling kind", `{"rope_scaling":"linear"}`, "rope_scaling", `is "linear", not an object`},
		{"rope_parameters kind", `{"rope_parameters":[1]}`, "rope_parameters", "is a list, not an object"},
		{"rope_type kind", `{"rope_scaling":{"rope_type":3}}`, "rope_scaling.rope_type", "is 3, not a RoPE type name"},
		{"type kind", `{"rope_scaling":{"type":false}}`, "rope_scaling.type", "is false, not a RoPE type name"},
		{"factor kind", `{"rope_scaling":{"rope_type":"llama3","factor":"32"}}`, "rope_scaling.factor", `is "32", not a number`},
		{"factor zero", `{"rope_scaling":{"rope_type":"linear","factor":0}}`, "rope_scaling.factor", "is 0, not a number in (0, 4096]"},
		{"low_freq_factor", `{"rope_scaling":{"rope_type":"llama3","low_freq_factor":-1}}`, "rope_scaling.low_freq_factor", "is -1, not a number in (0, 4096]"},
		{"high_freq_factor", `{"rope_scaling":{"rope_type":"llama3","high_freq_factor":1e9}}`, "rope_scaling.high_freq_factor", "is 1e9, not a number in (0, 4096]"},
		{"original length", `{"rope_scaling":{"rope_type":"llama3","original_max_position_embeddings":8192.5}}`, "rope_scaling.original_max_position_embeddings", "is 8192.5, not a whole number in 1..134217728"},
		{"original length zero", `{"rope_parameters":{"rope_type":"yarn","original_max_position_embeddings":0}}`, "rope_parameters.original_max_position_embeddings", "is 0, not a whole number in 1..134217728"},
		{"rope_parameters theta", `{"rope_parameters":{"rope_theta":-5}}`, "rope_parameters.rope_theta", "is -5, not a number in (0, 1e12]"},
		{"nested scaling", `{"text_config":{"rope_scaling":{"rope_type":"linear","factor":"8"}}}`, "text_config.rope_scaling.factor", `is "8", not a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := model.ParseConfig("org/m/config.json", []byte(tc.json))
			var ce *model.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "org/m/config.json", ce.File)
			assert.Equal(t, tc.key, ce.Key)
			assert.Equal(t, tc.want, ce.Problem)
			assert.True(t, strings.HasPrefix(err.Error(), "org/m/config.json: "+tc.key+" "), err.Error())
		})
	}
}

// TestEditDecodesAgain spoils a parsed config through Edit, the one way to change its maps:
// Features and Arch refuse it as ParseConfig would have, and mending it mends them.
func TestEditDecodesAgain(t *testing.T) {
	c, err := model.ParseConfig("c", []byte(`{`+small+`,"rope_theta":10000}`))
	require.NoError(t, err)
	c.Edit(func(text map[string]any) { text["rope_theta"] = json.Number("-1") })
	var ce *model.ConfigError
	_, err = c.Features()
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "rope_theta", ce.Key)
	_, err = c.Arch()
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "rope_theta", ce.Key)

	c.Edit(func(text map[string]any) {
		text["rope_theta"] = json.Number("10000")
		text["vocab_size"] = json.Number("0")
	})
	_, err = c.Features()
	require.ErrorAs(t, err, &ce, "the sizes are checked with the features")
	assert.Equal(t, "vocab_size", ce.Key)

	c.Edit(func(text map[string]any) { text["vocab_size"] = json.Number("5") })
	f, err := c.Features()
	require.NoError(t, err)
	assert.Equal(t, json.Number("10000"), f.RopeTheta)
	a, err := c.Arch()
	require.NoError(t, err)
	assert.Equal(t, int64(5), a.Vocab)
}

// TestEditWithoutEditIsNotSeen: a change made to the maps outside Edit is not decoded, so
// no reader sees half of it; the config answers what it was decoded to.
func TestEditWithoutEditIsNotSeen(t *testing.T) {
	c, err := model.ParseConfig("c", []byte(`{`+small+`,"rope_theta":10000}`))
	require.NoError(t, err)
	c.Text["rope_theta"] = json.Number("-1")
	f, err := c.Features()
	require.NoError(t, err)
	assert.Equal(t, json.Number("10000"), f.RopeTheta)
}

// TestConfigLiteralIsNotDecoded: a Config that ParseConfig did not make answers an error,
// not the zero Arch, which would size a model of nothing.
func TestConfigLiteralIsNotDecoded(t *testing.T) {
	c := &model.Config{Top: map[string]any{}, Text: map[string]any{}}
	_, err := c.Arch()
	require.ErrorContains(t, err, "not decoded")
	_, err = c.Features()
	require.ErrorContains(t, err, "not decoded")
}

// TestFeaturesRealConfigs pins the features of released checkpoints, the written forms
// of their numbers included: recipes copy rope_theta and the norm eps verbatim.
func TestFeaturesRealConfigs(t *testing.T) {
	tests := []struct {
		id   string
		want model.Features
	}{
		{"Qwen/Qwen3-0.6B", model.Features{ModelType: "qwen3", HiddenAct: "silu", RopeTheta: "1000000", NormEps: "1e-06", MaxPositions: 40960}},
		{"Qwen/Qwen2.5-1.5B", model.Features{ModelType: "qwen2", HiddenAct: "silu", RopeTheta: "1000000.0", NormEps: "1e-06", MaxPositions: 131072}},
		{"meta-llama/Llama-3.2-1B-Instruct", model.Features{ModelType: "llama", HiddenAct: "silu", RopeTheta: "500000.0", NormEps: "1e-05", MaxPositions: 131072,
			Rope: model.RopeScaling{Type: "llama3", Factor: "32.0", LowFreqFactor: "1.0", HighFreqFactor: "4.0", OriginalMaxPositions: 8192}}},
		{"LiquidAI/LFM2.5-1.2B-Base", model.Features{ModelType: "lfm2", RopeTheta: "1000000.0", NormEps: "1e-05", MaxPositions: 128000, ConvLCache: 3}},
		{"LiquidAI/LFM2-1.2B", model.Features{ModelType: "lfm2", RopeTheta: "1000000.0", NormEps: "1e-05", MaxPositions: 128000, ConvLCache: 3}},
		{"Qwen/Qwen3-30B-A3B-FP8", model.Features{ModelType: "qwen3_moe", HiddenAct: "silu", RopeTheta: "1000000.0", NormEps: "1e-06", MaxPositions: 40960,
			Experts: true, Quantized: true, QuantMethod: "fp8"}},
		{"google/gemma-3-4b-it", model.Features{ModelType: "gemma3_text", Vision: true, Rope: model.RopeScaling{Type: "linear", Factor: "8.0"}}},
		{"microsoft/Phi-4-mini-instruct", model.Features{ModelType: "phi3", HiddenAct: "silu", RopeTheta: "10000.0", NormEps: "1e-05", MaxPositions: 131072,
			PartialRotary: "0.75", Rope: model.RopeScaling{Type: "longrope", OriginalMaxPositions: 4096, ShortFactors: phiShort, LongFactors: phiLong}}},
		{"HuggingFaceTB/SmolLM3-3B", model.Features{ModelType: "smollm3", HiddenAct: "silu", RopeTheta: "5000000.0", NormEps: "1e-06", MaxPositions: 65536,
			NoRopeLayers: smolNoRope}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			c := source(t, tc.id).Config
			got, err := c.Features()
			require.NoError(t, err)
			assert.Empty(t, cmp.Diff(tc.want, got))
			if a, err := c.Arch(); err == nil {
				assert.Empty(t, cmp.Diff(tc.want, a.Features), "the Arch carries the same features")
			}
		})
	}
}

// The Phi-4-mini LongRoPE factors and SmolLM3's no_rope_layers, as their configs write them.
var (
	phiShort   = numbers("1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0")
	phiLong    = numbers("1", "1.118320672", "1.250641126", "1.398617824", "1.564103225", "1.74916897", "1.956131817", "2.187582649", "2.446418898", "2.735880826", "3.059592084", "3.421605075", "3.826451687", "4.279200023", "4.785517845", "5.351743533", "5.984965424", "6.693110555", "7.485043894", "8.370679318", "9.36110372", "10.4687158", "11.70738129", "13.09260651", "14.64173252", "16.37415215", "18.31155283", "20.47818807", "22.90118105", "25.61086418", "28.64115884", "32.03", "32.1", "32.13", "32.23", "32.6", "32.61", "32.64", "32.66", "32.7", "32.71", "32.93", "32.97", "33.28", "33.49", "33.5", "44.16", "47.77")
	smolNoRope = []int64{1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0}
)

func numbers(ns ...string) []json.Number {
	out := make([]json.Number, len(ns))
	for i, n := range ns {
		out[i] = json.Number(n)
	}
	return out
}
