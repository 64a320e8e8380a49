package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/speed"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

// speedConfig is a config folder of the embedded pipeline.yaml with refuse_slow_path set.
func speedConfig(t *testing.T, refuse bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"pipeline.yaml", "versions.env", "fidelity-text.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "config", name))
		require.NoError(t, err)
		if name == "pipeline.yaml" && !refuse { // the committed file refuses
			require.Contains(t, string(b), "refuse_slow_path: true")
			b = []byte(strings.Replace(string(b), "refuse_slow_path: true", "refuse_slow_path: false", 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}

// speedEnv sets up the speed commands' tests: the stand-in runner on PYTHONPATH, a step
// summary and an ARM runner label; it returns the python that runs the drivers.
func speedEnv(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	standin, err := filepath.Abs(filepath.Join("..", "drivers", "testdata", "smoke_standin"))
	require.NoError(t, err)
	t.Setenv("PYTHONPATH", standin)
	t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(t.TempDir(), "summary.md"))
	t.Setenv("EXE_EXPO_RUNNER", "arm-8")
	return py
}

// TestSpeedCommands: smoke records a speed block after a passing smoke run, and keeps one
// already there (the export job's, on ARM); speed measures again over it. A file that
// prefills one token a call is flagged, and refused where pipeline.yaml's
// speed.refuse_slow_path says so (TestSpeedStaticShape, TestSpeedMeasuredSlowPath).
func TestSpeedCommands(t *testing.T) {
	py := speedEnv(t)
	t.Run("smoke measures once", func(t *testing.T) {
		t.Setenv("SMOKE_STANDIN", "answer")
		out, path := checkFolder(t, 1000)
		code, stdout, stderr := run(t, "smoke", out, "--python", py)
		require.Equal(t, ExitOK, code, stderr)
		rep, err := report.Read(path)
		require.NoError(t, err)
		require.NotNil(t, rep.Speed)
		require.Len(t, rep.Speed.Runs, 1, "a 2k window of unknown chunk holds the 512-token prompt only")
		assert.Equal(t, 512, rep.Speed.Runs[0].PromptTokens)
		assert.InDelta(t, 250, rep.Speed.Runs[0].PrefillTokPerSec, 1e-6)
		assert.Equal(t, "arm-8", rep.Speed.Host.Runner)
		assert.Equal(t, speed.HostNote, rep.Speed.Host.Note)
		assert.Empty(t, rep.Speed.SlowPath)
		assert.Contains(t, stdout, "speed on ")

		rep.Speed.Runs[0].PrefillTokPerSec = 1 // a block measured before: smoke keeps it
		require.NoError(t, report.Write(path, rep))
		code, _, stderr = run(t, "smoke", out, "--python", py)
		require.Equal(t, ExitOK, code, stderr)
		rep, err = report.Read(path)
		require.NoError(t, err)
		assert.InDelta(t, 1, rep.Speed.Runs[0].PrefillTokPerSec, 1e-9)

		code, _, stderr = run(t, "speed", out, "--python", py) // speed measures again
		require.Equal(t, ExitOK, code, stderr)
		rep, err = report.Read(path)
		require.NoError(t, err)
		assert.InDelta(t, 250, rep.Speed.Runs[0].PrefillTokPerSec, 1e-6)
	})

}

// TestSpeedStaticShape: a file built on purpose without dynamic shapes (enable_dynamic_shape
// false, so the runner feeds the prompt one token a call) is flagged by its structure, and
// refused only where pipeline.yaml says so.
func TestSpeedStaticShape(t *testing.T) {
	py := speedEnv(t)
	for _, tc := range []struct {
		name   string
		refuse bool
		code   int
	}{{"static-shape file refused", true, ExitFailed}, {"static-shape file recorded", false, ExitOK}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SMOKE_STANDIN", "answer")
			out, path := pteFolder(t, false)
			code, stdout, stderr := run(t, "speed", out, "--python", py, "--config", speedConfig(t, tc.refuse))
			assert.Equal(t, tc.code, code, stderr)
			rep, err := report.Read(path)
			require.NoError(t, err)
			require.NotNil(t, rep.Speed)
			assert.True(t, rep.Speed.Structure.OneTokenPerCall)
			require.Len(t, rep.Speed.SlowPath, 1, "the structure alone: the stand-in's clock prefills fast")
			assert.Contains(t, rep.Speed.SlowPath[0], "enable_dynamic_shape is false")
			assert.Equal(t, tc.refuse, rep.Speed.BlocksPublish)
			assert.Contains(t, stdout, "slow path: ")
			if tc.refuse {
				assert.Contains(t, rep.Blockers(), "slow path (speed.refuse_slow_path): "+rep.Speed.SlowPath[0])
			} else {
				assert.Empty(t, rep.Blockers())
			}
		})
	}

}

// TestSpeedMeasuredSlowPath: a file that prefilled at its decode rate is flagged wherever it
// was measured, and refused only on ARM, whose kernels are the phone's.
func TestSpeedMeasuredSlowPath(t *testing.T) {
	py := speedEnv(t)
	t.Setenv("SMOKE_STANDIN", "onetoken")
	out, path := pteFolder(t, true)
	code, _, stderr := run(t, "speed", out, "--python", py, "--config", speedConfig(t, true))
	onARM := runtime.GOARCH == speed.PhoneArch
	assert.Equal(t, map[bool]int{true: ExitFailed, false: ExitOK}[onARM], code, stderr)
	rep, err := report.Read(path)
	require.NoError(t, err)
	require.NotNil(t, rep.Speed)
	assert.False(t, rep.Speed.Structure.OneTokenPerCall)
	require.Len(t, rep.Speed.SlowPath, 1)
	assert.Contains(t, rep.Speed.SlowPath[0], "prefilled 20.0 tokens/s against 20.0 decoding")
	assert.Equal(t, onARM, rep.Speed.BlocksPublish)
}

// pteFolder is an export folder with one XNNPACK report whose file is a real program
// (pkg/pte/ptetest) built with or without export_llm's dynamic shapes, as sized.
func pteFolder(t *testing.T, dynamic bool) (out, path string) {
	t.Helper()
	b, err := ptetest.ExportLLMProgram(dynamic)
	require.NoError(t, err)
	out = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "xnnpack"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "xnnpack", "m.pte"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "tokenizer.json"), []byte("{}"), 0o644))
	path = filepath.Join(out, "xnnpack", report.Name("2k"))
	require.NoError(t, report.Write(path, &report.Report{Backend: "xnnpack", Tokenizer: "tokenizer.json",
		Source: report.Source{TotalParams: 751_632_384}, Estimates: report.Estimates{PTEBytesEstimate: int64(len(b))},
		Window: report.Window{Context: 2048}, Metadata: pte.Metadata{"get_max_seq_len": int64(2048)},
		Files: []report.File{{Path: "xnnpack/m.pte", Bytes: int64(len(b))}}}))
	return out, path
}
