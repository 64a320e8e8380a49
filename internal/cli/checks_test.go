package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// checkFolder is an export folder with one XNNPACK report whose file is size bytes against
// an estimate of 1000.
func checkFolder(t *testing.T, size int) (out, path string) {
	t.Helper()
	out = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "xnnpack"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "xnnpack", "m.pte"), make([]byte, size), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "tokenizer.json"), []byte("{}"), 0o644))
	path = filepath.Join(out, "xnnpack", report.Name("2k"))
	require.NoError(t, report.Write(path, &report.Report{Backend: "xnnpack", Tokenizer: "tokenizer.json",
		Source:    report.Source{TotalParams: 751_632_384},
		Estimates: report.Estimates{PTEBytesEstimate: 1000},
		Window:    report.Window{Context: 2048}, Recipe: map[string]any{"qmode": "8da4w"},
		Files: []report.File{{Path: "xnnpack/m.pte", Bytes: int64(size)}}}))
	return out, path
}

// TestSmokeCommand runs `exe-expo smoke` with the stand-in runner of internal/drivers' tests:
// exit 0 with the verdicts printed and recorded when the file answers and is as sized, 2
// with the reason when it is not, and the step summary carries the reason.
func TestSmokeCommand(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	standin, err := filepath.Abs(filepath.Join("..", "drivers", "testdata", "smoke_standin"))
	require.NoError(t, err)
	t.Setenv("PYTHONPATH", standin)
	for _, tc := range []struct {
		name, mode string
		size, code int
		out        []string
	}{
		{"passes", "answer", 1000, ExitOK, []string{"checked by smoke", "size check (xnnpack): passed", `smoke run: passed, 5 tokens: " The capital is Paris."`}},
		{"unquantized linears", "answer", 4000, ExitFailed, []string{"not publishable: size check failed: the files are 4000 bytes, +300.0% off the sizing estimate of 1000 bytes"}},
		{"runner fails", "raise", 1000, ExitFailed, []string{"not publishable: smoke test failed: runner error: RuntimeError: method forward failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SMOKE_STANDIN", tc.mode)
			summary := filepath.Join(t.TempDir(), "summary.md")
			t.Setenv("GITHUB_STEP_SUMMARY", summary)
			out, path := checkFolder(t, tc.size)
			resPath := filepath.Join(t.TempDir(), "smoke.json")
			code, stdout, stderr := run(t, "smoke", out, "--python", py, "--result", resPath)
			assert.Equal(t, tc.code, code, stderr)
			streamHas(t, "stdout", stdout, tc.out)
			rep, err := report.Read(path)
			require.NoError(t, err)
			require.NotNil(t, rep.SizeCheck)
			require.NotNil(t, rep.Smoke)
			md, err := os.ReadFile(summary)
			require.NoError(t, err)
			assert.Contains(t, string(md), "### smoke")
			if tc.code != ExitOK {
				assert.Contains(t, string(md), "not publishable: "+rep.Blockers()[0])
			}
			// the result lists the report that passed, or the window refused with why: what
			// the workflow hands to publish, or to the fp32 fallback
			res, err := result.Read(resPath)
			require.NoError(t, err)
			if tc.code == ExitOK {
				assert.Equal(t, []string{"xnnpack/" + report.Name("2k")}, res.Outputs.Reports)
				assert.Equal(t, []result.Failed{}, res.Outputs.Failed)
				return
			}
			assert.Equal(t, []string{}, res.Outputs.Reports)
			assert.Empty(t, cmp.Diff([]result.Failed{{Window: 2048, File: "xnnpack/m.pte", QMode: "8da4w", Reason: strings.Join(rep.Blockers(), "; ")}}, res.Outputs.Failed))
		})
	}
}

func TestCheckCommandsRefuse(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		errs []string
	}{
		{"smoke without OUT", []string{"smoke"}, []string{"smoke: give exactly one OUT folder"}},
		{"smoke on an empty folder", []string{"smoke", empty}, []string{"smoke: " + empty + " holds no export report (export-report-*.json in a backend folder)"}},
		{"gate without source", []string{"gate", empty}, []string{"gate: give exactly one OUT folder, and the fp32 source with --source"}},
		{"gate with a missing config folder", []string{"gate", empty, "--source", empty, "--config", filepath.Join(empty, "none")}, []string{"gate: ", "pipeline.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := run(t, tc.args...)
			assert.Equal(t, ExitFailed, code)
			streamHas(t, "stderr", errs, tc.errs)
		})
	}
}

// TestGateSourceFromHub gives gate a Hub id: it is downloaded into --work, without the
// weights when a reference already exists (the measure reads only the tokenizer and chat
// template), with them when the fp32 reference must still be made.
func TestGateSourceFromHub(t *testing.T) {
	dir := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	srv := hubtest.New(t)
	_, err := srv.AddModelDir("Qwen/Qwen3-0.6B", dir, hubtest.PipelineTag("text-generation"))
	require.NoError(t, err)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("EXE_EXPO_OFFLINE", "")
	out, _ := checkFolder(t, 1000)

	work := t.TempDir()
	ref := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, os.WriteFile(ref, []byte(`{"prompt":{"file":"other","sha256":"0000"},"rows":{}}`), 0o644))
	python := filepath.Join(standinBin(t), "python-ok") // answers the python check; runs no gate probe
	code, _, errs := run(t, "gate", out, "--source", "Qwen/Qwen3-0.6B", "--work", work, "--reference", ref, "--python", python)
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "was made with prompt file other")
	assert.FileExists(t, filepath.Join(work, "source", "config.json"))
	assert.NoFileExists(t, filepath.Join(work, "source", "model.safetensors"), "weights fetched for a gate that has its reference")

	work = t.TempDir()
	code, _, errs = run(t, "gate", out, "--source", "Qwen/Qwen3-0.6B", "--work", work, "--python", python)
	assert.Equal(t, ExitFailed, code, errs)
	assert.FileExists(t, filepath.Join(work, "source", "model.safetensors"), "the fp32 reference needs the weights")

	code, _, errs = run(t, "gate", out, "--source", "no such folder", "--python", python)
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "gate: --source no such folder is neither a model folder nor a Hub id such as Qwen/Qwen3-0.6B")
}
