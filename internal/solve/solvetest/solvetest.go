// Package solvetest gives tests of the solve (here and in the CLI) the python and the
// model folder a whole solve runs on without ExecuTorch. It is for tests only.
package solvetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
)

// root is the repository's root folder.
func root() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "..")
}

// Python is the python of the solve's end-to-end tests: the stand-in toolchain answers
// the version probe and the checkpoint conversion; Debian's torch runs the other drivers,
// with the stand-in transformers and ExecuTorch of internal/drivers' tests on PYTHONPATH. It
// returns the wrapper and the torch python behind it; skipped without a python that has
// torch and omegaconf (a failure under EXE_EXPO_CI=1, whose machine has them).
func Python(t *testing.T) (wrapper, torchPython string) {
	t.Helper()
	skip := func(format string, args ...any) {
		if os.Getenv("EXE_EXPO_CI") == "1" { // .ci/run installs python3-torch and python3-omegaconf
			t.Fatalf("EXE_EXPO_CI=1 and "+format, args...)
		}
		t.Skipf("skipping: "+format, args...)
	}
	py, _, err := drivers.FindTorchPython(context.Background())
	if err != nil {
		skip("%v", err)
	}
	if out, err := exec.Command(py, "-c", "import omegaconf").CombinedOutput(); err != nil {
		skip("%s cannot import omegaconf: %s", py, out)
	}
	t.Setenv("PYTHONPATH", filepath.Join(root(), "internal", "drivers", "testdata", "smoke_standin"))
	bin := t.TempDir()
	require.NoError(t, exporttest.BuildStandin(bin))
	wrapper = filepath.Join(bin, "python-solve")
	script := fmt.Sprintf("#!/bin/bash\ncase \"$1\" in\n  -c|*convert.py) exec -a python-ok %q \"$@\" ;;\nesac\nexec %q \"$@\"\n",
		filepath.Join(bin, "standin"), py)
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper, py
}

// ModelDir is Qwen3-0.6B's folder with what the stand-in transformers load: a chat
// template and a tiny next-token model over 64 tokens (the stand-in ExecuTorch model's
// vocabulary) that never ends a reply early.
func ModelDir(t *testing.T) string {
	t.Helper()
	dir := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	rng := rand.New(rand.NewSource(3))
	var m struct {
		Emb [][]float64 `json:"emb"`
		W   [][]float64 `json:"w"`
		B   []float64   `json:"b"`
	}
	for i := 0; i < 64; i++ {
		e, w := make([]float64, 6), make([]float64, 6)
		for j := range e {
			e[j], w[j] = rng.NormFloat64(), 4*rng.NormFloat64()
		}
		m.Emb, m.W, m.B = append(m.Emb, e), append(m.W, w), append(m.B, rng.NormFloat64())
	}
	m.B[0] = -100 // EOS never wins: no reply is empty
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "standin_model.json"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "template.txt"), []byte("{content}"), 0o644))
	return dir
}

// EditedConfig is a folder holding the committed configuration with old replaced by new.
func EditedConfig(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(root(), "config")
	y, err := os.ReadFile(filepath.Join(cfg, "pipeline.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(y), old)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(strings.Replace(string(y), old, new, 1)), 0o644))
	for _, name := range []string{"versions.env", "fidelity-text.txt"} {
		b, err := os.ReadFile(filepath.Join(cfg, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}
