package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/drivers"
	"github.com/experimentalmachines/exe-expo/pkg/export/exporttest"
	"github.com/experimentalmachines/exe-expo/pkg/gate"
)

// solvePython is the python of the solve's end-to-end test: the stand-in toolchain
// answers the version probe and the checkpoint conversion; Debian's torch runs the other
// drivers, with the stand-in transformers and ExecuTorch of pkg/drivers' tests on
// PYTHONPATH. It returns the wrapper and the torch python behind it; skipped without a
// python that has torch and omegaconf.
func solvePython(t *testing.T) (wrapper, torchPython string) {
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
	standin, err := filepath.Abs(filepath.Join("..", "drivers", "testdata", "smoke_standin"))
	require.NoError(t, err)
	t.Setenv("PYTHONPATH", standin)
	bin := standinBin(t)
	wrapper = filepath.Join(bin, "python-solve")
	script := fmt.Sprintf("#!/bin/bash\ncase \"$1\" in\n  -c|*convert.py) exec -a python-ok %q \"$@\" ;;\nesac\nexec %q \"$@\"\n",
		filepath.Join(bin, "standin"), py)
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper, py
}

// solveModelDir is Qwen3-0.6B's folder with what the stand-in transformers load: a chat
// template and a tiny next-token model over 64 tokens (the stand-in ExecuTorch model's
// vocabulary) that never ends a reply early.
func solveModelDir(t *testing.T) string {
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

// editedConfig is the committed configuration with old replaced by new.
func editedConfig(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	y, err := os.ReadFile(filepath.Join("..", "..", "config", "pipeline.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(y), old)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(strings.Replace(string(y), old, new, 1)), 0o644))
	for _, name := range []string{"versions.env", "fidelity-text.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "config", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}

// TestSolveCommand runs `exe-expo solve` end to end on a local model folder: the checkpoint
// converted, the 104 calibration rows continued by the fp32 stand-in, the gate's fp32
// reference written beside the codes, every linear of the 28 layers and the output head
// solved, and the summary on stdout and in solve.json.
func TestSolveCommand(t *testing.T) {
	py, torchPy := solvePython(t)
	model := solveModelDir(t)
	root := t.TempDir()
	codes := filepath.Join(root, "codes", "codes.pt")
	work := filepath.Join(root, "work")
	code, out, errs := run(t, "solve", model, "--id", "Qwen/Qwen3-0.6B", "--out", codes, "--work", work, "--python", py)
	require.Equal(t, ExitOK, code, errs)
	var sum solveSummary
	require.NoError(t, json.Unmarshal([]byte(out), &sum), out)
	assert.Equal(t, "Qwen/Qwen3-0.6B", sum.ModelID)
	assert.Equal(t, "main", sum.Revision)
	assert.Equal(t, codes, sum.Codes)
	assert.Equal(t, 28*7+1, sum.Linears)
	assert.Equal(t, 104, sum.CalibrationRows)
	assert.Equal(t, 72, sum.CalibrationAppRows)
	assert.Equal(t, 0, sum.EmptyReplies)
	assert.InDelta(t, 0.01, sum.Damp, 1e-12)
	assert.Equal(t, 16, sum.GateRows)
	assert.Contains(t, errs, "exe-expo: continuing 104 calibration rows", "progress goes to stderr")

	saved, err := os.ReadFile(filepath.Join(root, "codes", "solve.json"))
	require.NoError(t, err)
	assert.JSONEq(t, out, string(saved), "solve.json is the summary printed")

	var rows []drivers.SolveRow
	b, err := os.ReadFile(filepath.Join(work, "calibration-rows.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rows))
	require.Len(t, rows, 104)
	positions := 0
	for i, r := range rows {
		want := map[bool]int{true: sum.CalibrationHead, false: 0}[i > 0 && i < 72]
		assert.Equal(t, want, r.KeepFrom, "row %d", i)
		positions += len(r.Tokens) - r.KeepFrom
	}
	assert.Positive(t, sum.CalibrationHead, "the app rows share the system prompt, primer and tools")
	assert.Equal(t, positions, sum.CalibrationPositions)

	var ref gate.Reference
	b, err = os.ReadFile(sum.Gate)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ref))
	assert.Len(t, ref.Rows, 16)
	assert.Equal(t, filepath.Join(root, "codes", "gate.json"), sum.Gate)
	require.NotNil(t, ref.Fidelity, "the fp32 reference holds the fidelity text")
	assert.Equal(t, "fidelity-text.txt", ref.Fidelity.Text.File)
	assert.Len(t, ref.Fidelity.Tokens, 128)
	assert.Len(t, ref.Fidelity.Positions, 128)
	assert.Equal(t, 32, ref.Fidelity.TopK)
	assert.NoError(t, ref.Fidelity.CheckReference())
	assert.Equal(t, 128, sum.GateFidelityPositions)

	check := `import sys, torch; c = torch.load(sys.argv[1])
print(len(c), all(int(v["qdata"].min()) >= -8 and int(v["qdata"].max()) <= 7 and v["scale"].dtype == torch.bfloat16 for v in c.values()))`
	got, err := exec.Command(torchPy, "-c", check, codes).Output()
	require.NoError(t, err)
	assert.Equal(t, "197 True", strings.TrimSpace(string(got)))
}

func TestSolveRefuses(t *testing.T) {
	root := t.TempDir()
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	codes := filepath.Join(root, "codes", "codes.pt")
	file := filepath.Join(root, "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"--out below a file", []string{model, "--out", filepath.Join(file, "codes.pt")},
			"solve: --out " + filepath.Join(file, "codes.pt") + ": its folder cannot be created: not a directory"},
		{"--work below a file", []string{model, "--out", codes, "--work", filepath.Join(file, "w")},
			"solve: --work " + filepath.Join(file, "w") + " cannot be created: not a directory"},
		{"no MODEL", []string{"--out", codes}, "solve: give exactly one MODEL: a Hub id or a local model folder"},
		{"no --out", []string{model}, "solve: --out is required: the codes file to write, such as codes/codes.pt"},
		{"--out a folder", []string{model, "--out", root}, "solve: --out " + root + " is a folder: give the codes file to write, such as " + filepath.Join(root, "codes.pt")},
		{"bad model id", []string{"not a model", "--out", codes}, `solve: "not a model" is neither a local model folder nor a Hugging Face model id (org/name)`},
		{"no python", []string{model, "--out", codes, "--work", filepath.Join(root, "w"), "--python", filepath.Join(root, "no-python")},
			"solve: --python " + filepath.Join(root, "no-python") + " cannot be run"},
		{"bad config", []string{model, "--out", codes, "--config", filepath.Join(root, "none")}, "solve: "},
		// config.Load's own wording is its package's; the solve's refusal must name the file.
		{"bad config names the file", []string{model, "--out", codes, "--config", filepath.Join(root, "none")},
			filepath.Join(root, "none", "pipeline.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, append([]string{"solve"}, tc.args...)...)
			assert.Equal(t, ExitFailed, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)
		})
	}
}

// TestSolveRowsOverTheLimit: a calibration prompt past calibration.prompt_limit fails the
// solve naming the row and its token count, before any solve runs.
func TestSolveRowsOverTheLimit(t *testing.T) {
	py, _ := solvePython(t)
	root := t.TempDir()
	cfg := editedConfig(t, "  prompt_limit: 512", "  prompt_limit: 5")
	codes := filepath.Join(root, "codes", "codes.pt")
	code, out, errs := run(t, "solve", solveModelDir(t), "--id", "Qwen/Qwen3-0.6B", "--out", codes,
		"--work", filepath.Join(root, "work"), "--python", py, "--config", cfg)
	assert.Equal(t, ExitFailed, code, errs)
	assert.Empty(t, out)
	assert.Regexp(t, `solve failed: calibration rows of Qwen/Qwen3-0\.6B: calibration row "Which US state is Montpelier the capital of\?" has \d+ prompt tokens past the \d+-token app head, over calibration\.prompt_limit 5`, errs)
	assert.NoFileExists(t, codes)
	assert.NoFileExists(t, filepath.Join(root, "codes", "gate.json"), "the rows are checked before the reference is made")
}

// TestSolveHelp: `solve --help` answers on stdout with exit 0, which is how pkg/workflow
// learns that the CLI has the command and renders the solve job.
func TestSolveHelp(t *testing.T) {
	code, out, errs := run(t, "solve", "--help")
	assert.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "Usage: exe-expo solve MODEL --out FILE.pt")
	for _, f := range []string{"-out", "-work", "-revision", "-python", "-config", "-id"} {
		assert.Contains(t, out, "\n  "+f+" ", "flag %s", f)
	}
	code, out, _ = run(t, "help")
	assert.Equal(t, ExitOK, code)
	assert.Regexp(t, `\n  solve +solve a model's GPTQ int4 codes`, out)
}

// TestSolveRefusesIneligibleModel: a model the export_llm recipes would not build is
// refused before the toolchain is asked or anything downloaded, and the work folder the
// solve created goes with the failure.
func TestSolveRefusesIneligibleModel(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	code, out, errs := run(t, "solve", exporttest.ModelDir(t, "Qwen/Qwen3-30B-A3B"), "--id", "Qwen/Qwen3-30B-A3B",
		"--out", filepath.Join(root, "codes", "codes.pt"), "--work", work, "--python", filepath.Join(standinBin(t), "python-noet"))
	assert.Equal(t, ExitFailed, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "solve failed: Qwen/Qwen3-30B-A3B is not eligible: Qwen3-30B-A3B is a base checkpoint, and only chat models are published")
	assert.NoDirExists(t, work)
}
