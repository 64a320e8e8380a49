package solve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/solve/solvetest"
)

// options is a solve of model into root/codes/codes.pt with the configuration in cfgDir
// ("" for the embedded one), its progress in log.
func options(t *testing.T, cfgDir, model, root, python string, log *bytes.Buffer) Options {
	t.Helper()
	o := Options{ConfigDir: cfgDir, Model: model, ID: "Qwen/Qwen3-0.6B", Revision: "main",
		Out: filepath.Join(root, "codes", "codes.pt"), Work: filepath.Join(root, "work"), Python: python}
	if log != nil {
		o.Log = log
	}
	return o
}

// TestRun solves a local model folder end to end: the checkpoint converted, the 104
// calibration rows continued by the fp32 stand-in, the gate's fp32 reference written
// beside the codes, every linear of the 28 layers and the output head solved, and the
// result in solve.json.
func TestRun(t *testing.T) {
	py, torchPy := solvetest.Python(t)
	root := t.TempDir()
	var log bytes.Buffer
	o := options(t, "", solvetest.ModelDir(t), root, py, &log)
	ready := 0
	o.Ready = func() { ready++ }
	sum, err := Run(context.Background(), o)
	require.NoError(t, err, log.String())
	assert.Equal(t, "Qwen/Qwen3-0.6B", sum.ModelID)
	assert.Equal(t, "main", sum.Revision)
	assert.Equal(t, o.Out, sum.Codes)
	assert.Equal(t, 28*7+1, sum.Linears)
	assert.Equal(t, 104, sum.CalibrationRows)
	assert.Equal(t, 72, sum.CalibrationAppRows)
	assert.Equal(t, 0, sum.EmptyReplies)
	assert.InDelta(t, 0.01, sum.Damp, 1e-12)
	assert.Equal(t, 16, sum.GateRows)
	assert.Contains(t, log.String(), "exe-expo: continuing 104 calibration rows", "progress goes to the log")
	assert.Equal(t, 1, ready)

	saved, err := os.ReadFile(filepath.Join(root, "codes", "solve.json"))
	require.NoError(t, err)
	assert.Equal(t, string(sum.JSON())+"\n", string(saved), "solve.json is the result")

	var rows []drivers.SolveRow
	b, err := os.ReadFile(filepath.Join(o.Work, "calibration-rows.json"))
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
	assert.Len(t, ref.Fidelity.Tokens, 2048, "gate.fidelity_tokens")
	assert.Len(t, ref.Fidelity.Positions, 2048)
	assert.Equal(t, 32, ref.Fidelity.TopK)
	assert.NoError(t, ref.Fidelity.CheckReference())
	assert.Equal(t, 2048, sum.GateFidelityPositions)

	check := `import sys, torch; c = torch.load(sys.argv[1])
print(len(c), all(int(v["qdata"].min()) >= -8 and int(v["qdata"].max()) <= 7 and v["scale"].dtype == torch.bfloat16 for v in c.values()))`
	got, err := exec.Command(torchPy, "-c", check, o.Out).Output()
	require.NoError(t, err)
	assert.Equal(t, "197 True", strings.TrimSpace(string(got)))
}

// TestRunRowsOverTheLimit: a calibration prompt past calibration.prompt_limit fails the
// solve naming the row and its token count, before any solve runs.
func TestRunRowsOverTheLimit(t *testing.T) {
	py, _ := solvetest.Python(t)
	root := t.TempDir()
	cfg := solvetest.EditedConfig(t, "  prompt_limit: 512", "  prompt_limit: 5")
	var log bytes.Buffer
	o := options(t, cfg, solvetest.ModelDir(t), root, py, &log)
	_, err := Run(context.Background(), o)
	require.Error(t, err)
	assert.Regexp(t, `^calibration rows of Qwen/Qwen3-0\.6B: calibration row "Which US state is Montpelier the capital of\?" has \d+ prompt tokens past the \d+-token app head, over calibration\.prompt_limit 5`, err.Error())
	assert.NoFileExists(t, o.Out)
	assert.NoFileExists(t, filepath.Join(root, "codes", "gate.json"), "the rows are checked before the reference is made")
	assert.NoFileExists(t, filepath.Join(root, "codes", "solve.json"))
}

// TestRunRefusesOut: an Out that is missing, a folder, or below a file is refused before
// anything else, naming the option as the caller words it.
func TestRunRefusesOut(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name, out, want string
	}{
		{"missing", "", "--out is required: the codes file to write, such as codes/codes.pt"},
		{"a folder", root, "--out " + root + " is a folder: give the codes file to write, such as " + filepath.Join(root, "codes.pt")},
		{"below a file", filepath.Join(file, "codes.pt"), "--out " + filepath.Join(file, "codes.pt") + ": its folder cannot be created: not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, "", "no-such-model", t.TempDir(), "python3", nil)
			o.Out = tc.out
			_, err := Run(context.Background(), o)
			var in *InputError
			require.ErrorAs(t, err, &in)
			assert.Equal(t, FieldOut, in.Field)
			assert.Equal(t, tc.want, in.Sentence(func(f Field) string { return "--" + strings.ToLower(string(f)) }))
			assert.Equal(t, strings.Replace(tc.want, "--out", "Out", 1), err.Error())
		})
	}
}

// TestRunRefusesIneligibleModel: a model the export_llm recipes would not build is
// refused before the toolchain is asked or anything downloaded, and the work folder the
// solve created goes with the failure.
func TestRunRefusesIneligibleModel(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, exporttest.BuildStandin(bin))
	root := t.TempDir()
	o := options(t, "", exporttest.ModelDir(t, "Qwen/Qwen3-30B-A3B"), root, filepath.Join(bin, "python-noet"), nil)
	o.ID = "Qwen/Qwen3-30B-A3B"
	_, err := Run(context.Background(), o)
	require.Error(t, err)
	var in *export.InputError
	assert.False(t, errors.As(err, &in), "the model is no option to fix")
	assert.Contains(t, err.Error(), "Qwen/Qwen3-30B-A3B is not eligible: Qwen3-30B-A3B is a base checkpoint, and only chat models are published")
	assert.NoDirExists(t, o.Work)
}

// TestRunRefusesConfig: a configuration folder that cannot be read is refused, with the
// configuration's own sentence, after Out and before Ready: nothing has started.
func TestRunRefusesConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	o := options(t, dir, "no-such-model", t.TempDir(), "python3", nil)
	o.Ready = func() { t.Error("Ready called for a refused request") }
	_, err := Run(context.Background(), o)
	var in *InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, FieldConfigDir, in.Field)
	assert.Contains(t, err.Error(), filepath.Join(dir, "pipeline.yaml"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the configuration's error is kept")
	assert.DirExists(t, filepath.Dir(o.Out), "Out is checked first: its folder is made")
}
