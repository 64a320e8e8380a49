package family

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckpointReasons reads MoE, multimodal and pre-quantized from the typed features,
// architecture names aside.
func TestCheckpointReasons(t *testing.T) {
	const dense = `"architectures":["Qwen3ForCausalLM"]`
	tests := []struct {
		name, json string
		want       []string
	}{
		{"dense", `{` + dense + `}`, nil},
		{"expert count", `{` + dense + `,"num_local_experts":16}`,
			[]string{"mixture-of-experts checkpoint: only dense models fit the export recipes and a phone's memory"}},
		{"experts off", `{` + dense + `,"num_experts":0}`, nil},
		{"moe name", `{"architectures":["Qwen3MoeForCausalLM"]}`,
			[]string{"mixture-of-experts checkpoint: only dense models fit the export recipes and a phone's memory"}},
		{"vision_config", `{` + dense + `,"vision_config":{}}`,
			[]string{"multimodal checkpoint (it has a vision_config): only text-only releases are exported"}},
		{"quantized", `{` + dense + `,"quantization_config":{"quant_method":"fp8"}}`,
			[]string{`pre-quantized checkpoint (quant_method "fp8"): the export needs the original bf16/fp16 weights`}},
		// a family exported as its text model is no multimodal refusal (TestTextModelNote)
		{"text model of a wrapper", `{"architectures":["Qwen3_5ForConditionalGeneration"],"vision_config":{}}`, nil},
		{"other wrapper", `{"architectures":["Qwen2_5_VLForConditionalGeneration"],"vision_config":{}}`,
			[]string{"multimodal checkpoint (Qwen2_5_VLForConditionalGeneration): only the text decoder of a text-only release is exported"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := model.ParseConfig("c", []byte(tc.json))
			require.NoError(t, err)
			got, _ := checkpointReasons(c, ByArchitecture(c.Architectures()))
			assert.Equal(t, tc.want, got)
		})
	}

	c, err := model.ParseConfig("org/m/config.json", []byte(`{`+dense+`}`))
	require.NoError(t, err)
	c.Edit(func(text map[string]any) { text["attention_bias"] = "yes" })
	got, _ := checkpointReasons(c, ByKey("qwen3"))
	assert.Equal(t, []string{`org/m/config.json: attention_bias is "yes", not true or false`}, got,
		"a config spoiled after parsing is refused by key")
}

// TestTextModelNote: Qwen3.5's wrapper is exported as its text model, and the verdict's
// note says so and what is left out.
func TestTextModelNote(t *testing.T) {
	c, err := model.ParseConfig("c", []byte(`{"architectures":["Qwen3_5ForConditionalGeneration"],"vision_config":{}}`))
	require.NoError(t, err)
	reasons, notes := checkpointReasons(c, ByKey("qwen3_5"))
	assert.Empty(t, reasons)
	assert.Equal(t, []string{"multimodal checkpoint (Qwen3_5ForConditionalGeneration): exe-expo exports its text model (text_config) only, " +
		"as ExecuTorch's own recipe does; model.visual.*, mtp.* are left out of the files, the parameter count and the sizes"}, notes)
}
