package family_test

import (
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
