package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/export/exporttest"
)

// TestExportCommand runs the export through the CLI with the stand-in toolchain and
// checks what a workflow step sees: stdout JSON, stderr sentences and the exit codes.
func TestExportCommand(t *testing.T) {
	bin := t.TempDir()
	if err := exporttest.BuildStandin(bin); err != nil {
		t.Fatal(err)
	}
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	root := t.TempDir()
	args := func(mode string, extra ...string) []string {
		return append([]string{"export", "--backend", "xnnpack", model, "--out", filepath.Join(root, "out-"+mode),
			"--work", filepath.Join(root, "work-"+mode), "--python", filepath.Join(bin, "python-"+mode)}, extra...)
	}
	code, out, errs := run(t, args("ok", "--context", "2048")...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var res struct {
		Files  []string
		Window int
		Report string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if res.Window != 2048 || len(res.Files) != 1 || res.Files[0] != "xnnpack/Qwen3-0.6B-8da4w-2k.pte" {
		t.Errorf("result = %+v", res)
	}
	if _, err := os.Stat(res.Report); err != nil {
		t.Error(err)
	}
	if !strings.Contains(errs, "[export_llm] ") || !strings.Contains(errs, "[export_llm] Lowering to xnnpack") {
		t.Errorf("tool log not streamed with its prefix:\n%s", errs)
	}

	// no machine builds 128k (the causal masks alone are 481 GB): exit 4, the reason on stderr
	code, _, errs = run(t, args("ok", "--context", "131072")...)
	if code != ExitSkipped || !strings.Contains(errs, "export skipped:") || !strings.Contains(errs, "causal masks alone") {
		t.Errorf("128k: exit %d\n%s", code, errs)
	}
	code, _, errs = run(t, args("fail", "--context", "2048")...)
	if code != ExitFailed || !strings.Contains(errs, "export failed:") || !strings.Contains(errs, "exited with status 3") {
		t.Errorf("failing tool: exit %d\n%s", code, errs)
	}
	code, _, errs = run(t, "export", "--backend", "qnn", model, "--out", root+"/o", "--work", root+"/w")
	if code != ExitFailed || !strings.Contains(errs, "--soc is required") {
		t.Errorf("qnn without soc: exit %d\n%s", code, errs)
	}
}

// TestExportInActions checks what a workflow step gets: the token masked, a step summary
// with the file table, the skip as a warning.
func TestExportInActions(t *testing.T) {
	bin := t.TempDir()
	if err := exporttest.BuildStandin(bin); err != nil {
		t.Fatal(err)
	}
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	root := t.TempDir()
	summary := filepath.Join(root, "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("HF_TOKEN", "hf_secretvalue123")
	code, out, errs := run(t, "export", "--backend", "xnnpack", model, "--context", "2048", "--out", root+"/out", "--work", root+"/work",
		"--python", filepath.Join(bin, "python-ok"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "::add-mask::hf_secretvalue123") {
		t.Errorf("token not masked: %s", out)
	}
	if !strings.Contains(errs, "::group::export_llm") || !strings.Contains(errs, "::endgroup::") {
		t.Errorf("tool log not grouped:\n%s", errs)
	}
	md, _ := os.ReadFile(summary)
	for _, want := range []string{"### Qwen3-0.6B → xnnpack, any arm64, 2048 tokens", "| `xnnpack/Qwen3-0.6B-8da4w-2k.pte` |", "Window: requested window 2048"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	code, out, _ = run(t, "export", "--backend", "xnnpack", model, "--context", "131072", "--out", root+"/out2", "--work", root+"/work2",
		"--python", filepath.Join(bin, "python-ok"))
	md, _ = os.ReadFile(summary)
	if code != ExitSkipped || !strings.Contains(out, "::warning::") || !strings.Contains(string(md), "window skipped") {
		t.Errorf("skip: exit %d, stdout %s, summary %s", code, out, md)
	}
	if strings.Contains(string(md), "hf_secretvalue123") {
		t.Error("the token reached the summary")
	}
}
