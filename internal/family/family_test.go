package family_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
)

func load(t *testing.T, id string) *model.Source {
	t.Helper()
	src, err := snapshot.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func cfg(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEvaluateRealConfigs(t *testing.T) {
	c := cfg(t)
	tests := []struct {
		id       string
		eligible bool
		family   string
		ok       []string // supported backends, in order
		reasons  []string // substrings of model-wide reasons
		backend  map[string]string
	}{
		{id: "Qwen/Qwen3-1.7B", eligible: true, family: "qwen3", ok: []string{"xnnpack", "vulkan", "qnn", "mediatek"}},
		{id: "Qwen/Qwen3-0.6B", eligible: true, family: "qwen3", ok: []string{"xnnpack", "vulkan", "qnn", "mediatek"}},
		{id: "Qwen/Qwen3-4B", eligible: true, family: "qwen3", ok: []string{"xnnpack", "vulkan", "mediatek"},
			backend: map[string]string{"qnn": "no entry for this checkpoint"}},
		{id: "Qwen/Qwen3-8B", family: "qwen3", ok: []string{"xnnpack", "vulkan", "mediatek"},
			reasons: []string{"named size 8B is above 4B", "is not below 4,500,000,000"}},
		{id: "Qwen/Qwen3-30B-A3B", reasons: []string{"named size 30B", "mixture-of-experts checkpoint"}},
		{id: "Qwen/Qwen3-30B-A3B-FP8", reasons: []string{"excluded marker(s) fp8", "mixture-of-experts", "pre-quantized checkpoint (quant_method \"fp8\")"}},
		{id: "meta-llama/Llama-4-Scout-17B-16E-Instruct", reasons: []string{"named size 17B is above 4B", "mixture-of-experts", "multimodal checkpoint (Llama4ForConditionalGeneration)"}},
		{id: "google/gemma-3-4b-it", reasons: []string{"multimodal checkpoint (Gemma3ForConditionalGeneration)"}},
		{id: "Qwen/Qwen2.5-VL-3B-Instruct", reasons: []string{"multimodal checkpoint", "no chat template"}},
		{id: "google/gemma-3-1b-it", eligible: true, family: "gemma3", ok: []string{"xnnpack", "qnn"},
			backend: map[string]string{"vulkan": "no Vulkan recipe", "mediatek": "gemma3_text"}},
		{id: "HuggingFaceTB/SmolLM3-3B", eligible: true, family: "smollm3", ok: []string{"xnnpack", "qnn"}},
		{id: "Qwen/Qwen2.5-1.5B", family: "qwen2_5", reasons: []string{"Qwen2.5-1.5B is a base checkpoint"}},
		{id: "Qwen/Qwen2.5-0.5B-Instruct", eligible: true, family: "qwen2_5", ok: []string{"xnnpack", "vulkan"},
			backend: map[string]string{"mediatek": "-100 attention mask", "qnn": "no entry"}},
		{id: "HuggingFaceTB/SmolLM2-135M-Instruct", eligible: true, family: "llama", ok: []string{"xnnpack", "vulkan", "qnn", "mediatek"}},
		{id: "HuggingFaceTB/SmolLM2-360M-Instruct", eligible: true, family: "llama", ok: []string{"xnnpack", "vulkan", "mediatek"}},
		{id: "meta-llama/Llama-3.2-1B-Instruct", eligible: true, family: "llama", ok: []string{"xnnpack", "vulkan", "qnn", "mediatek"}},
		{id: "LiquidAI/LFM2.5-1.2B-Base", family: "lfm2", ok: []string{"xnnpack", "mediatek"}, reasons: []string{"base checkpoint"},
			backend: map[string]string{"vulkan": "short convolution", "qnn": "SUPPORTED_LLM_MODELS"}},
		{id: "LiquidAI/LFM2-1.2B", family: "lfm2", reasons: []string{"no chat template"}},
		// no size in the name is no refusal; export_llm builds Phi-4-mini for the CPU and GPU
		{id: "microsoft/Phi-4-mini-instruct", family: "phi4mini", eligible: true,
			backend: map[string]string{"qnn": "no entry"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			v := backend.Evaluate(c, load(t, tc.id))
			if v.Eligible != tc.eligible || v.Family != tc.family {
				t.Errorf("eligible=%v family=%q, want %v %q; reasons %q", v.Eligible, v.Family, tc.eligible, tc.family, v.Reasons)
			}
			if got := strings.Join(v.Supported(), ","); tc.ok != nil && got != strings.Join(tc.ok, ",") {
				t.Errorf("supported = %s, want %s", got, strings.Join(tc.ok, ","))
			}
			all := strings.Join(v.Reasons, " | ")
			for _, r := range tc.reasons {
				if !strings.Contains(all, r) {
					t.Errorf("reasons %q lack %q", v.Reasons, r)
				}
			}
			if tc.eligible && len(v.Reasons) != 0 {
				t.Errorf("eligible with reasons %q", v.Reasons)
			}
			for b, want := range tc.backend {
				if got := v.Backend(b); got.OK || !strings.Contains(got.Reason, want) {
					t.Errorf("%s: %+v, want refusal containing %q", b, got, want)
				}
			}
			if enn := v.Backend("enn"); enn.OK || !strings.Contains(enn.Reason, "waiting for an LLM path upstream") {
				t.Errorf("enn = %+v", enn)
			}
		})
	}
}

func TestRealParameterCap(t *testing.T) {
	c := cfg(t)
	src := load(t, "Qwen/Qwen3-4B")
	src.Params = &model.Params{Total: 4_500_000_000, Source: "test"}
	v := backend.Evaluate(c, src)
	if v.Eligible || !strings.Contains(strings.Join(v.Reasons, "|"), "4,500,000,000 parameters is not below 4,500,000,000") {
		t.Errorf("4.5B real parameters accepted: %q", v.Reasons)
	}
	src.Params = nil
	v = backend.Evaluate(c, src)
	if v.Eligible || !strings.Contains(strings.Join(v.Reasons, "|"), "no safetensors parameter count") {
		t.Errorf("unknown count accepted: %q", v.Reasons)
	}
	src = load(t, "Qwen/Qwen3-1.7B")
	src.AccessError = "gated repo and the HF_TOKEN account has no access: accept the license at https://huggingface.co/Qwen/Qwen3-1.7B with that account"
	v = backend.Evaluate(c, src)
	if v.Eligible || !strings.HasPrefix(v.Reasons[0], "gated repo") {
		t.Errorf("gated: %q", v.Reasons)
	}
	src = load(t, "Qwen/Qwen3-1.7B")
	src.PipelineTag = "text-ranking"
	if v = backend.Evaluate(c, src); v.Eligible || !strings.Contains(v.Reasons[0], "pipeline tag is text-ranking") {
		t.Errorf("pipeline tag: %q", v.Reasons)
	}
}

func TestRecipeRefusals(t *testing.T) {
	llama := load(t, "meta-llama/Llama-3.2-1B-Instruct")
	fam := family.ByKey("llama")
	if p, err := family.XNNPACKPlan(fam, llama.Config); err != nil || p.ModelClass != "llama3_2" || p.Params["use_scaled_rope"] != true {
		t.Fatalf("Llama 3.2 plan = %+v, %v", p, err)
	}
	llama.Config.Edit(func(text map[string]any) { text["rope_scaling"].(map[string]any)["factor"] = json.Number("8.0") })
	if _, err := family.XNNPACKPlan(fam, llama.Config); err == nil || !strings.Contains(err.Error(), "factor") {
		t.Errorf("factor 8 accepted: %v", err)
	}
	qwen := load(t, "Qwen/Qwen3-1.7B")
	qwen.Config.Edit(func(text map[string]any) {
		text["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": json.Number("4.0")}
	})
	if _, err := family.XNNPACKPlan(family.ByKey("qwen3"), qwen.Config); err == nil || !strings.Contains(err.Error(), "yarn") {
		t.Errorf("YaRN accepted: %v", err)
	}
	if _, err := family.MediaTekPlan(family.ByKey("qwen3"), qwen.Config, 4); err == nil || !strings.Contains(err.Error(), "not validated on the MediaTek") {
		t.Errorf("YaRN accepted on MediaTek: %v", err)
	}
	qwen = load(t, "Qwen/Qwen3-1.7B")
	qwen.Config.Edit(func(text map[string]any) { text["use_sliding_window"] = true })
	if _, err := family.XNNPACKPlan(family.ByKey("qwen3"), qwen.Config); err == nil || !strings.Contains(err.Error(), "sliding-window") {
		t.Errorf("sliding window accepted: %v", err)
	}
	qwen = load(t, "Qwen/Qwen3-1.7B")
	qwen.Config.Edit(func(text map[string]any) {
		text["rope_parameters"] = map[string]any{"rope_type": "default", "rope_theta": json.Number("1000000")}
		delete(text, "rope_theta")
	})
	if p, err := family.XNNPACKPlan(family.ByKey("qwen3"), qwen.Config); err != nil || p.Params["rope_theta"] != json.Number("1000000") {
		t.Errorf("transformers v5 rope_parameters: %+v %v", p, err)
	}
}

func TestMediaTekPlans(t *testing.T) {
	tests := []struct {
		id, script, pre string
		chunks          int
	}{
		{"Qwen/Qwen3-0.6B", "qwen.py", "qwen3.json", 4},
		{"meta-llama/Llama-3.2-1B-Instruct", "llama.py", "llama3.json", 4},
		{"HuggingFaceTB/SmolLM2-135M-Instruct", "llama.py", "qwen.json", 3},
		{"LiquidAI/LFM2.5-1.2B-Base", "lfm2.py", "qwen3.json", 4},
	}
	for _, tc := range tests {
		src := load(t, tc.id)
		p, err := family.MediaTekPlan(family.ByArchitecture(src.Config.Architectures()), src.Config, 4)
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if p.Script != tc.script || p.Preformatter != tc.pre || p.Chunks != tc.chunks {
			t.Errorf("%s: %+v", tc.id, p)
		}
	}
	for layers, want := range map[int]int{28: 4, 24: 4, 36: 4, 30: 3, 26: 2, 1: 1, 16: 4} {
		if got := family.MTKChunks(layers, 4); got != want {
			t.Errorf("MTKChunks(%d) = %d, want %d", layers, got, want)
		}
	}
}
