package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// TestResultFile: every command writes its outcome with --result, whatever the outcome, and
// the result's reason is the sentence the command printed last on stderr.
func TestResultFile(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		outcome string
		reason  string
		check   func(t *testing.T, o result.Outputs)
	}{
		{"a plan with windows", []string{"plan", "Qwen/Qwen3-0.6B", "--backend", "xnnpack", "--contexts", "2048,4096"}, ExitOK, "ok", "",
			func(t *testing.T, o result.Outputs) {
				var ws []int
				for _, w := range o.Windows {
					ws = append(ws, w.Window)
					assert.NotEmpty(t, w.Runner, "window %d has a runner", w.Window)
				}
				assert.Equal(t, []int{2048, 4096}, ws)
				assert.Empty(t, o.Skipped)
				assert.Empty(t, o.SoCs)
			}},
		{"a plan with chips", []string{"plan", "Qwen/Qwen3-0.6B", "--backend", "qnn", "--contexts", "2048", "--socs", "SM8750"}, ExitOK, "ok", "",
			func(t *testing.T, o result.Outputs) { assert.Equal(t, []string{"SM8750"}, o.SoCs) }},
		{"a backend that refuses the model", []string{"plan", "google/gemma-3-1b-it", "--backend", "vulkan"}, ExitNotEligible, "not_eligible",
			"plan: Vulkan (GPU) does not take google/gemma-3-1b-it: ", nil},
		{"a model that is not eligible", []string{"plan", "Qwen/Qwen3-8B"}, ExitNotEligible, "not_eligible", "plan: Qwen/Qwen3-8B is not eligible: ", nil},
		{"contexts without a backend", []string{"plan", "Qwen/Qwen3-0.6B", "--contexts", "2048"}, ExitFailed, "failed",
			"plan: --contexts and --socs pick the windows and chips of one backend; give it with --backend", nil},
		{"a flag mistake", []string{"inspect", "--max-seq-len", "x", "a.pte"}, ExitFailed, "failed", `exe-expo inspect: --max-seq-len "x" is not a whole number`, nil},
		{"smoke of an empty folder", []string{"smoke", "EMPTY"}, ExitFailed, "failed", "smoke: ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "result.json")
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if a == "EMPTY" {
					args[i] = t.TempDir()
				}
			}
			code, _, errs := run(t, append(args, "--result", path)...)
			require.Equal(t, tc.code, code, errs)
			r, err := result.Read(path)
			require.NoError(t, err)
			assert.Equal(t, result.SchemaVersion, r.SchemaVersion)
			assert.Equal(t, args[0], r.Command)
			assert.Equal(t, tc.code, r.ExitCode)
			assert.Equal(t, tc.outcome, r.Outcome)
			assert.True(t, strings.HasPrefix(r.Reason, tc.reason), "reason %q, want %q…", r.Reason, tc.reason)
			if tc.code != ExitOK {
				lines := strings.Split(strings.TrimSpace(errs), "\n")
				assert.Equal(t, lines[len(lines)-1], r.Reason, "the result's reason is the last sentence on stderr")
			}
			if tc.check != nil {
				tc.check(t, r.Outputs)
			}
		})
	}
}

// TestChecksReadSkippedResults: smoke and gate list the windows the export results in
// OUT/results/ record as skipped; a folder where every window was skipped passes with
// nothing to check; a result of another schema is refused by name.
func TestChecksReadSkippedResults(t *testing.T) {
	out := t.TempDir()
	skip := result.New("export")
	skip.Outputs.Skipped = []result.Skipped{{Window: 32768, SoC: "SM8750", Reason: "needs 140 GiB"}}
	skip.Reason = "needs 140 GiB"
	skip.Finish(ExitSkipped)
	require.NoError(t, result.Write(filepath.Join(out, "results", "export-32768-SM8750.json"), skip))
	// a failed export is not a skipped window, whatever its outputs say
	failed := result.New("export")
	failed.Outputs.Skipped = []result.Skipped{{Window: 2048, SoC: "SM8750", Reason: "not a skip"}}
	failed.Finish(ExitFailed)
	require.NoError(t, result.Write(filepath.Join(out, "results", "export-2048-SM8750.json"), failed))

	for _, command := range []string{"smoke", "gate"} {
		path := filepath.Join(t.TempDir(), "r.json")
		args := []string{command, out, "--result", path}
		if command == "gate" {
			args = append(args, "--source", t.TempDir(), "--python", "/nonexistent/python")
		}
		code, stdout, errs := run(t, args...)
		if command == "gate" && code != ExitOK {
			// the gate checks its python before reading the folder; the folder part is smoke's
			continue
		}
		require.Equal(t, ExitOK, code, errs)
		assert.Contains(t, stdout, "nothing to check: all 1 window(s)")
		r, err := result.Read(path)
		require.NoError(t, err)
		assert.Empty(t, cmp.Diff(skip.Outputs.Skipped, r.Outputs.Skipped))
		assert.Empty(t, r.Outputs.Files)
	}

	bad := filepath.Join(out, "results", "export-4096-SM8750.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema_version": 9, "command": "export", "exit_code": 4}`), 0o644))
	code, _, errs := run(t, "smoke", out)
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, bad+" is an exe-expo result of schema 9, and this exe-expo reads schema 1 only")
}
