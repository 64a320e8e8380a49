package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// needTool skips a test that lacks a tool, unless CI promised to install it.
func needTool(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatalf("EXE_EXPO_CI=1 and %v (CI installs python3-torch with apt)", err)
	}
	t.Skipf("skipping: %v (apt-get install -y python3-torch)", err)
}

func torchPython(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	py, _, err := FindTorchPython(ctx)
	needTool(t, err)
	return py
}

// pyJSON runs a testdata script with python and decodes its JSON stdout into out.
func pyJSON(t testing.TB, python string, out any, args ...string) {
	t.Helper()
	scripts, _ := filepath.Glob(filepath.Join("testdata", "*.py"))
	for _, s := range scripts {
		os.Stat(s) // lets go test's result cache see changes to the scripts
	}
	cmd := exec.Command(python, args...)
	b, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %v: %v\n%s", python, args, err, stderr)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%v printed %q: %v", args, b, err)
		}
	}
}

// anyPython prefers Debian's interpreter: a pyenv shim costs over a second per start.
func anyPython(t testing.TB) string {
	t.Helper()
	for _, c := range DefaultPythons {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	needTool(t, fmt.Errorf("no python3 on this machine"))
	return ""
}

// driverDir writes every driver into a fresh folder for a test that imports one of them.
func driverDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := WriteScripts(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every embedded driver and every test script must at least compile, with any python3.
func TestPyCompile(t *testing.T) {
	py := anyPython(t)
	dir := t.TempDir()
	paths, err := WriteScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(Names()) {
		t.Fatalf("wrote %d scripts, Names lists %d", len(paths), len(Names()))
	}
	extra, _ := filepath.Glob(filepath.Join("testdata", "*.py"))
	for _, p := range append(paths, extra...) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			cmd := exec.Command(py, "-m", "py_compile", p)
			cmd.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("py_compile %s: %v\n%s", p, err, out)
			}
		})
	}
}

// TestVersionProbe runs the probe in a real python: installed distributions come back with
// their versions, missing ones are left out.
func TestVersionProbe(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatal("python3 is missing")
		}
		t.Skip("no python3")
	}
	got, err := Toolchain(context.Background(), py, "pip", "no-such-distribution-exe-expo")
	if err != nil {
		t.Fatal(err)
	}
	if got["pip"] == "" {
		t.Errorf("pip's version missing: %v", got)
	}
	if _, ok := got["no-such-distribution-exe-expo"]; ok {
		t.Errorf("a missing distribution has a version: %v", got)
	}
}

// TestCheckPython: a python that lacks what a step needs is one sentence naming it, what it
// lacks and what to do.
func TestCheckPython(t *testing.T) {
	ctx := context.Background()
	answers := func(json string) string {
		return fakePython(t, `[ "$1" = "-c" ] && echo '`+json+`'`)
	}
	all := answers(`{"executorch": "1.4.0", "torch": "2.13.0", "transformers": "5.0.0rc1"}`)
	none := answers(`{"executorch": null, "torch": null, "transformers": null}`)
	noHF := answers(`{"executorch": "1.4.0", "torch": "2.13.0", "transformers": null}`)
	for _, tc := range []struct{ name, python, want string }{
		{"has all", all, ""},
		{"lacks one", noHF, "python " + noHF + " has no transformers installed: " + PythonHint},
		{"lacks all", none, "python " + none + " has none of executorch, torch or transformers installed: " + PythonHint},
		{"not there", "/no/such/python", "python /no/such/python cannot be run (no such file or directory): " + PythonHint},
		{"not on PATH", "no-such-python-exe-expo", "python no-such-python-exe-expo cannot be run (not found on PATH): " + PythonHint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPython(ctx, tc.python, DistExecuTorch, DistTorch, DistTransformers)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
