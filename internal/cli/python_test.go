package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// toolchainJSON is what the export environment's python answers the version probe with.
const toolchainJSON = `{"executorch": "1.4.0", "torch": "2.13.0", "torchao": "0.18.0", "transformers": "5.0.0rc1"}`

// probeAnswer is the start of a fake python's script: called with -c (the version probe
// of drivers.Toolchain), it prints answer and exits.
func probeAnswer(answer string) string {
	return "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then echo '" + answer + "'; exit 0; fi\n"
}

// fakePythons writes the pythons the check refuses into a fresh folder: one that is not
// there, one that fails, one without ExecuTorch, one without transformers. Each leaves a
// file "ran" beside it when it is run as a driver, which no refused command may do.
func fakePythons(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	ran := "touch " + filepath.Join(dir, "ran") + "\nexit 1\n"
	scripts := map[string]string{
		"fails":   "#!/bin/sh\necho \"python: error while loading shared libraries: libpython3.11.so.1.0\" >&2\nexit 127\n",
		"no-et":   probeAnswer(`{"executorch": null, "torch": "2.13.0", "torchao": "0.18.0", "transformers": "5.0.0rc1"}`) + ran,
		"no-hf":   probeAnswer(`{"executorch": "1.4.0", "torch": "2.13.0", "torchao": "0.18.0", "transformers": null}`) + ran,
		"no-json": "#!/bin/sh\necho 'Python 3.11.9'\n",
	}
	pys := map[string]string{"missing": filepath.Join(dir, "no-such-python"), "ran": filepath.Join(dir, "ran")}
	for name, body := range scripts {
		pys[name] = filepath.Join(dir, "python-"+name)
		require.NoError(t, os.WriteFile(pys[name], []byte(body), 0o755))
	}
	return pys
}

// TestCommandsCheckThePython: smoke, gate, audit and solve refuse a python that cannot run
// their drivers before any Python work (or any download) starts, in one sentence naming
// the python, what it lacks and what to do; the --result file records the same sentence.
// smoke and gate refuse an OUT without reports before they look at the python.
func TestCommandsCheckThePython(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1") // a check that let a command through must not reach the Hub
	pys := fakePythons(t)
	out, _ := checkFolder(t, 1000)
	empty := t.TempDir()
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	hint := ": " + drivers.PythonHint
	for _, tc := range []struct {
		name string
		args []string // the command line, with --python added from py
		py   string
		want string
	}{
		{"smoke, python missing", []string{"smoke", out}, "missing",
			"smoke: python " + pys["missing"] + " cannot be run (no such file or directory)" + hint},
		{"smoke, python fails", []string{"smoke", out}, "fails",
			"smoke: " + pys["fails"] + " could not say which toolchain it has (exit status 127): python: error while loading shared libraries: libpython3.11.so.1.0" + hint},
		{"smoke, not a python", []string{"smoke", out}, "no-json",
			"smoke: " + pys["no-json"] + ` could not say which toolchain it has: it answered "Python 3.11.9", not the JSON the version probe prints; is it a python?` + hint},
		{"smoke, no executorch", []string{"smoke", out}, "no-et",
			"smoke: python " + pys["no-et"] + " has no executorch installed" + hint},
		{"smoke, no reports comes first", []string{"smoke", empty}, "missing",
			"smoke: " + empty + " holds no export report (export-report-*.json in a backend folder)"},
		{"gate, no transformers", []string{"gate", out, "--source", "Qwen/Qwen3-0.6B", "--work", filepath.Join(empty, "gate-work")}, "no-hf",
			"gate: python " + pys["no-hf"] + " has no transformers installed" + hint},
		{"gate, python missing", []string{"gate", out, "--source", model}, "missing",
			"gate: python " + pys["missing"] + " cannot be run (no such file or directory)" + hint},
		{"gate, no reports comes first", []string{"gate", empty, "--source", model}, "missing",
			"gate: " + empty + " holds no export report (export-report-*.json in a backend folder)"},
		{"audit, no executorch", []string{"audit", "HuggingFaceTB/SmolLM2-360M-Instruct", "--work", filepath.Join(empty, "audit-work")}, "no-et",
			"audit: python " + pys["no-et"] + " has no executorch installed" + hint},
		{"solve, no transformers", []string{"solve", model, "--id", "Qwen/Qwen3-0.6B", "--out", filepath.Join(empty, "codes", "codes.pt"), "--work", filepath.Join(empty, "solve-work")}, "no-hf",
			"solve: " + pys["no-hf"] + " has no transformers installed, which the solve's calibration and fp32 reference run with: point --python (or EXE_EXPO_PYTHON) at the export environment's python (python/install.sh installs it and prints its path)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := filepath.Join(t.TempDir(), "result.json")
			args := append(append([]string{}, tc.args...), "--python", pys[tc.py], "--result", res)
			code, stdout, errs := run(t, args...)
			assert.Equal(t, ExitFailed, code, errs)
			assert.Empty(t, stdout)
			assert.Equal(t, tc.want+"\n", errs, "one sentence on stderr")
			r, err := result.Read(res)
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Reason)
			assert.NoFileExists(t, pys["ran"], "a driver ran with a python the check refuses")
			for _, dir := range []string{"gate-work", "audit-work", "solve-work"} {
				assert.NoDirExists(t, filepath.Join(empty, dir), "work began before the python was checked")
			}
			for _, internal := range []string{"fork/exec", "exec: ", "json: ", "Traceback"} {
				assert.NotContains(t, errs, internal)
			}
			assert.False(t, strings.Contains(errs, "\n\n"))
		})
	}
}
