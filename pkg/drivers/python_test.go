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
