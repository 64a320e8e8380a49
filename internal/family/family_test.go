package family_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestNameRules(t *testing.T) {
	c := cfg(t)
	tests := []struct{ id, want string }{
		{"Qwen/Qwen3-1.7B-GGUF", "excluded marker(s) gguf"},
		{"Qwen/Qwen2.5-32B-Instruct", "named size 32B is above 4B"},
		{"someone/two-sizes-1B-3B", "several sizes (1B, 3B)"},
		{"Qwen/Qwen2.5-Coder-1.5B-Instruct", "no chat template"},
		{"Qwen/Qwen3-Embedding-0.6B", "excluded marker(s) embedding"},
		// the verdict holds the published repo's name to the app's rules once; the recipe
		// only checks what a file's path adds (recipe.FileRules)
		{"someone/Qwen3-1.7B-XNNPACK", "whose name contains xnnpack"},
	}
	for _, tc := range tests {
		got := strings.Join(family.NameReasons(c, tc.id), " | ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("NameReasons(%s) = %q, want %q", tc.id, got, tc.want)
		}
	}
	if r := family.NameReasons(c, "Qwen/Qwen3-1.7B"); len(r) != 0 {
		t.Errorf("Qwen3-1.7B refused by name: %q", r)
	}
}

// A local folder planned without --id is judged by the folder's name; every refusal that
// reads that name says so and how to give the Hub id instead.
func TestFolderNameReasonsSayPassID(t *testing.T) {
	c := cfg(t)
	const hint = "that is the local folder's name: pass --id ORG/NAME"
	tests := []struct {
		name      string
		id        string
		fromDir   bool
		eligible  bool
		withHint  []string
		unchanged []string
	}{
		{"folder without a family name", "weights", true, false, []string{"no chat template"}, nil},
		{"folder named base", "qwen3-0.6B-base", true, false, []string{"is a base checkpoint"}, nil},
		{"a Hub id with the same name", "someone/weights", false, false, nil, []string{"no chat template"}},
		{"folder planned with --id", "Qwen/Qwen3-0.6B", false, true, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := load(t, "Qwen/Qwen3-0.6B")
			src.ID, src.IDFromFolder = tc.id, tc.fromDir
			v := backend.Evaluate(c, src)
			assert.Equal(t, tc.eligible, v.Eligible, "reasons: %q", v.Reasons)
			for _, want := range tc.withHint {
				r := reasonWith(v.Reasons, want)
				require.NotEmpty(t, r, "no reason says %q: %q", want, v.Reasons)
				assert.Contains(t, r, hint)
			}
			for _, want := range tc.unchanged {
				r := reasonWith(v.Reasons, want)
				require.NotEmpty(t, r, "no reason says %q: %q", want, v.Reasons)
				assert.NotContains(t, r, "--id")
			}
		})
	}
}

func reasonWith(reasons []string, part string) string {
	for _, r := range reasons {
		if strings.Contains(r, part) {
			return r
		}
	}
	return ""
}

func TestNaming(t *testing.T) {
	if got := family.AppModelName("larryliu0820/Qwen3-1.7B-INT8-INT4-ExecuTorch-XNNPACK", "model.pte"); got != "Qwen3-1.7B-INT8-INT4-ExecuTorch-XNNPACK.pte" {
		t.Errorf("AppModelName = %s", got)
	}
	if got := family.AppModelName("someone/two-sizes", "3b/xnnpack/model.pte"); got != "two-sizes-3b-xnnpack.pte" {
		t.Errorf("AppModelName = %s", got)
	}
	if got := family.AppModelName("experimentalmachines/Qwen3-1.7B-ExecuTorch", "xnnpack/Qwen3-1.7B-8da4w-8k.pte"); got != "Qwen3-1.7B-ExecuTorch-Qwen3-1.7B-8da4w-8k.pte" {
		t.Errorf("AppModelName = %s", got)
	}
	for in, want := range map[string]string{"Qwen3-1.7B": "1.7B", "SmolLM2-360M-Instruct": "360M", "Qwen2.5-0.5B": "0.5B", "Llama-3.2-1B": "1B", "x1.5B": "", "1.5Bx": ""} {
		got := strings.Join(family.SizeHints(in), ",")
		if got != want {
			t.Errorf("SizeHints(%s) = %q, want %q", in, got, want)
		}
	}
	if family.NominalBillions("360M") != 0.36 || family.NominalBillions("1.7B") != 1.7 {
		t.Error("NominalBillions")
	}
	for w, want := range map[int]string{32768: "32k", 2048: "2k", 512: "512", 3000: "3000"} {
		if got := family.WindowLabel(w); got != want {
			t.Errorf("WindowLabel(%d) = %s", w, got)
		}
	}
	for text, want := range map[string]string{"Qwen3-1.7B-vulkan-8da4w-4k.pte": "vulkan", "x-QNN": "qnn", "mtk/mt6991/a.pte": "neuropilot", "Qwen3-8da4w.pte": "unknown"} {
		if got := family.AppBackend(text); got != want {
			t.Errorf("AppBackend(%s) = %s, want %s", text, got, want)
		}
	}
}

func TestVariant(t *testing.T) {
	tests := []struct{ name, family, want string }{
		{"Qwen2.5-1.5B-Instruct", "qwen2_5", "instruct"},
		{"Qwen2.5-1.5B", "qwen2_5", "base"},
		{"gemma-3-1b-it", "gemma3", "instruct"},
		{"Llama-3.2-1B", "llama", "base"},
		{"Qwen3-4B", "qwen3", "instruct"},
		{"Qwen3-4B-Base", "qwen3", "base"},
		{"LFM2.5-1.2B-Instruct", "lfm2", "instruct"},
		{"LFM2.5-1.2B-Base", "lfm2", "base"},
		{"LFM2.5-1.2B-heretic", "lfm2", "instruct"},
		{"SmolLM3-3B", "smollm3", "instruct"},
	}
	for _, tc := range tests {
		if got := family.Variant(tc.name, tc.family); got != tc.want {
			t.Errorf("Variant(%s) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestParamsMatchExecuTorch compares the generated params JSON with ExecuTorch's own files.
func TestParamsMatchExecuTorch(t *testing.T) {
	tests := []struct {
		id, file, class string
		skipKeys        []string
	}{
		{"Qwen/Qwen3-0.6B", "qwen3_0_6b.json", "qwen3_0_6b", nil},
		{"Qwen/Qwen3-1.7B", "qwen3_1_7b.json", "qwen3_1_7b", nil},
		{"Qwen/Qwen3-4B", "qwen3_4b.json", "qwen3_4b", nil},
		{"Qwen/Qwen2.5-1.5B", "qwen2_5_1_5b.json", "qwen2_5_1_5b", nil},
		{"Qwen/Qwen2.5-0.5B-Instruct", "qwen2_5_0_5b.json", "qwen2_5_0_5b", nil},
		{"HuggingFaceTB/SmolLM2-135M-Instruct", "smollm2_135m.json", "smollm2", nil},
		{"LiquidAI/LFM2.5-1.2B-Base", "lfm2_5_1_2b.json", "lfm2_5_1_2b", nil},
		{"LiquidAI/LFM2-1.2B", "lfm2_1_2b.json", "lfm2_5_1_2b", []string{"layer_types"}},
		// ffn_dim_multiplier would double the RoPE table and switch a 4k file to LongRoPE's
		// long factors (phi4miniPlan); it changes nothing else once hidden_dim is given.
		{"microsoft/Phi-4-mini-instruct", "phi_4_mini.json", "phi_4_mini", []string{"ffn_dim_multiplier"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			src := load(t, tc.id)
			fam := family.ByArchitecture(src.Config.Architectures())
			plan, err := family.XNNPACKPlan(fam, src.Config)
			if err != nil {
				t.Fatal(err)
			}
			if plan.ModelClass != tc.class {
				t.Errorf("model_class = %s, want %s", plan.ModelClass, tc.class)
			}
			want := readJSON(t, filepath.Join("testdata", "et-params", tc.file))
			got := roundTrip(t, plan.Params)
			for k, w := range want {
				if contains(tc.skipKeys, k) {
					continue
				}
				g, _ := json.Marshal(got[k])
				wb, _ := json.Marshal(w)
				if string(g) != string(wb) {
					t.Errorf("%s = %s, ExecuTorch has %s", k, g, wb)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok && k != "head_dim" {
					t.Errorf("generated key %s is not in ExecuTorch's file", k)
				}
			}
		})
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func roundTrip(t *testing.T, v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
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

// TestAppRefusalsSayWhatTheAppIs: every refusal that invokes the app's rules says which app
// it is, and the no-template refusal names the family names the app takes: all of them by
// name alone, the architecture's own once it is known (LFM2.5 for an LFM2 release).
func TestAppRefusalsSayWhatTheAppIs(t *testing.T) {
	c := cfg(t)
	const app = "the app (the openweights Android app, which loads these files)"
	lfm2 := backend.Evaluate(c, load(t, "LiquidAI/LFM2-1.2B"))
	assert.Contains(t, lfm2.Reasons, app+" has no chat template for experimentalmachines/LFM2-1.2B-ExecuTorch: it picks one by the family name in a file's name (read lower-cased, letters and digits only), which must be LFM2.5 for the lfm2 architecture, and this one carries none")

	src := load(t, "meta-llama/Llama-3.2-1B-Instruct")
	src.ID = "someone/Qwen3-Llama-3.2-1B-Instruct"
	v := backend.Evaluate(c, src)
	assert.Contains(t, v.Reasons, "name reads as app family 'qwen3', architecture is 'llama': "+app+" picks a chat template by that family name and would pick the wrong one; a llama release's name must carry Llama-3.2 or SmolLM2")

	for _, tc := range []struct{ id, want string }{
		{"someone/weights-1B", app + " has no chat template for experimentalmachines/weights-1B-ExecuTorch: it picks one by the family name in a file's name (read lower-cased, letters and digits only), which must be Qwen3.5, Qwen3, Qwen2.5, SmolLM2, SmolLM3, Llama-3.2, Phi-4-mini, Gemma-3 or LFM2.5, and this one carries none"},
		{"Qwen/Qwen2.5-Coder-1.5B-Instruct", app + " has no chat template for experimentalmachines/Qwen2.5-Coder-1.5B-Instruct-ExecuTorch: it offers none for a name containing vl, vision, coder or guard (read lower-cased, letters and digits only), and this one contains coder"},
		{"someone/two-sizes-1B-3B", "name carries several sizes (1B, 3B), and " + app + " would read the first"},
	} {
		assert.Contains(t, family.NameReasons(c, tc.id), tc.want, tc.id)
	}
}

// TestNoSizeInTheNameIsANote: the app reads a size from the name only for its device-size
// filter, which keeps a repo without one (docs/research/app-rules.md, rule 6), so
// Phi-4-mini-instruct is not refused for its name; the verdict notes it.
func TestNoSizeInTheNameIsANote(t *testing.T) {
	c := cfg(t)
	assert.Empty(t, family.NameReasons(c, "microsoft/Phi-4-mini-instruct"))
	v := backend.Evaluate(c, load(t, "microsoft/Phi-4-mini-instruct"))
	assert.Empty(t, v.Reasons)
	assert.Equal(t, []string{`"Phi-4-mini-instruct" carries no size (such as 1.7B or 350M): the app (the openweights Android app, which loads these files) reads the size from the name only for its device-size filter, which then shows the repo on every phone`}, v.Notes)
	assert.Empty(t, backend.Evaluate(c, load(t, "Qwen/Qwen3-0.6B")).Notes, "a name with a size has no note")
}

// TestQwen35ParamsMatchExecuTorch: the export_llm params planned from each Qwen3.5 release's
// config.json are ExecuTorch's own params file for its class, key for key (the RoPE theta's
// spelling aside: the config writes 10000000, ExecuTorch 10000000.0).
func TestQwen35ParamsMatchExecuTorch(t *testing.T) {
	for _, tc := range []struct{ size, class string }{{"0.8B", "qwen3_5_0_8b"}, {"2B", "qwen3_5_2b"}, {"4B", "qwen3_5_4b"}} {
		t.Run(tc.size, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "hf-qwen3_5", "Qwen3.5-"+tc.size+".json"))
			require.NoError(t, err)
			c, err := model.ParseConfig("config.json", b)
			require.NoError(t, err)
			plan, err := family.XNNPACKPlan(family.ByKey("qwen3_5"), c)
			require.NoError(t, err)
			assert.Equal(t, tc.class, plan.ModelClass)
			want := readJSON(t, filepath.Join("testdata", "et-params", tc.class+".json"))
			got := roundTrip(t, plan.Params)
			for k, w := range want {
				g, _ := json.Marshal(got[k])
				wb, _ := json.Marshal(w)
				if k == "rope_theta" || k == "norm_eps" {
					assert.InDelta(t, w, got[k], 1e-12, k)
					continue
				}
				assert.Equal(t, string(wb), string(g), k)
			}
			for k := range got {
				_, ok := want[k]
				assert.True(t, ok, "generated key %s is not in ExecuTorch's file", k)
			}
		})
	}
}
