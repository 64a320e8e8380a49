package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
)

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

// TestSolveHelp: `solve --help` answers on stdout with exit 0, which is how internal/workflow
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
