package export_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// gateResult writes a gate --result file refusing the 2k window's quantized file.
func gateResult(t *testing.T, command string) string {
	t.Helper()
	r := result.New(command)
	r.Outputs.Failed = []result.Failed{{Window: 2048, File: "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte", QMode: "8da4w-gptq",
		Reason: "decision gate failed: mean KL against fp32 on the fidelity text is 0.00208, above gate.max_mean_kl 0.0001"}}
	r.Finish(result.ExitFailed)
	path := filepath.Join(t.TempDir(), command+".json")
	require.NoError(t, result.Write(path, r))
	return path
}

// TestFallbackExport: with the gate's result, the refused window is built in fp32, under
// the fp32 name, and the report says which file it replaces and why.
func TestFallbackExport(t *testing.T) {
	o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
	o.Fallback = gateResult(t, "gate")
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	r := res.Report
	assert.Equal(t, "xnnpack/Qwen3-0.6B-fp32-2k.pte", r.Files[0].Path)
	assert.Equal(t, "fp32", r.Recipe["qmode"])
	assert.Equal(t, &report.Fallback{Replaces: "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte", QMode: "8da4w-gptq",
		Reason: "decision gate failed: mean KL against fp32 on the fidelity text is 0.00208, above gate.max_mean_kl 0.0001"}, r.Fallback)
	back, err := report.Read(res.ReportPath)
	require.NoError(t, err)
	assert.Equal(t, r.Fallback, back.Fallback, "the written report keeps the fallback")
}

// TestFallbackRefusals: a fallback is refused before any work when it cannot mean what it
// says, each refusal naming the option to fix.
func TestFallbackRefusals(t *testing.T) {
	gate := gateResult(t, "gate")
	for _, tc := range []struct {
		name  string
		edit  func(o *export.Options)
		field export.Field
		want  string
	}{
		{"a window the gate did not refuse", func(o *export.Options) { o.Window = 4096 }, export.FieldFallback, "refused no file at 4096 tokens, so there is nothing to fall back from (it refused 1 window(s))"},
		{"no window", func(o *export.Options) { o.Window = 0 }, export.FieldWindow, "Window is required with Fallback"},
		{"a quantized qmode", func(o *export.Options) { o.QMode = "8da4w" }, export.FieldQMode, "QMode 8da4w and Fallback disagree: a fallback builds fp32"},
		{"codes", func(o *export.Options) { o.Codes = gate }, export.FieldCodes, "the fp32 Fallback quantizes nothing"},
		{"an NPU backend", func(o *export.Options) { o.Backend, o.SoC = "qnn", "SM8750" }, export.FieldFallback, "only the export_llm recipes build"},
		{"a plan's result", func(o *export.Options) { o.Fallback = gateResult(t, "plan") }, export.FieldFallback, "is the result of exe-expo plan, not of smoke or gate, which list the refused windows"},
		{"no result", func(o *export.Options) { o.Fallback = filepath.Join(t.TempDir(), "none.json") }, export.FieldFallback, "none.json: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
			o.Fallback = gate
			tc.edit(&o)
			_, err := export.Run(context.Background(), o)
			var in *export.InputError
			require.ErrorAs(t, err, &in)
			assert.Equal(t, tc.field, in.Field)
			assert.Contains(t, err.Error(), tc.want)
			assert.NoDirExists(t, o.Out, "a refused export left its output folder")
		})
	}
}

// TestFallbackMatchesWindowAndChip: the fallback replaces the refused file of this window
// and this chip only: the same window on a chip (an NPU's entry) or the next window on the
// same (no) chip is nothing to fall back from, and among several entries the one that
// matches both is the one replaced (docs/research/bounds.md).
func TestFallbackMatchesWindowAndChip(t *testing.T) {
	entry := func(window int, soc, file string) result.Failed {
		return result.Failed{Window: window, SoC: soc, File: file, QMode: "8da4w", Reason: "smoke failed"}
	}
	tests := []struct {
		name     string
		failed   []result.Failed
		replaces string // "" refuses
	}{
		{"this window, no chip", []result.Failed{entry(2048, "", "xnnpack/a-2k.pte")}, "xnnpack/a-2k.pte"},
		{"the next window", []result.Failed{entry(4096, "", "xnnpack/a-4k.pte")}, ""},
		{"the window before", []result.Failed{entry(1024, "", "xnnpack/a-1k.pte")}, ""},
		{"this window on a chip", []result.Failed{entry(2048, "SM8750", "qnn/sm8750/a-2k.pte")}, ""},
		{"the match among others", []result.Failed{entry(2048, "SM8750", "qnn/sm8750/a-2k.pte"), entry(4096, "", "xnnpack/a-4k.pte"),
			entry(2048, "", "xnnpack/a-2k.pte")}, "xnnpack/a-2k.pte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := result.New("smoke")
			r.Outputs.Failed = tc.failed
			r.Finish(result.ExitFailed)
			path := filepath.Join(t.TempDir(), "smoke.json")
			require.NoError(t, result.Write(path, r))
			o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
			o.Fallback = path
			res, err := export.Run(context.Background(), o)
			if tc.replaces == "" {
				var in *export.InputError
				require.ErrorAs(t, err, &in)
				assert.Equal(t, export.FieldFallback, in.Field)
				assert.Contains(t, err.Error(), "refused no file at 2048 tokens")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, res.Report.Fallback)
			assert.Equal(t, tc.replaces, res.Report.Fallback.Replaces)
		})
	}
}
