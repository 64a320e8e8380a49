package run

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pythonOrSkip finds python3, skipping the test where it is missing unless EXE_EXPO_CI=1.
func pythonOrSkip(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatalf("python3 not found: %v", err)
		}
		t.Skip("python3 not found; set EXE_EXPO_CI=1 to make this a failure")
	}
	return p
}

// TestPythonBuffering shows why the recipes must set PYTHONUNBUFFERED=1: a Python tool's
// print() lines (MediaTek's scripts) reach a pipe only when its 8 KiB buffer fills or the
// tool exits, so every stage would be timed at exit, while logging lines (export_llm,
// Qualcomm) go to stderr, which Python 3.9+ line-buffers.
//
// The script prints a marker and then waits for the test to release it; the test moves
// the run's clock on by 0.6 s and releases it when the marker reaches the log. A line that
// arrives while the tool runs is timed before the move and the next one after it; a
// buffered line arrives at exit, too late to release the script, which gives up after
// half a second and says so.
func TestPythonBuffering(t *testing.T) {
	python := pythonOrSkip(t)
	const wait = `import os, sys, time
def released(path, limit):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if os.path.exists(path):
            return "released"
        time.sleep(0.005)
    return "not released"
`
	const printScript = wait + `print("Preparing Model Calibration Inputs...")
print(released(sys.argv[1], float(sys.argv[2])))
print("Exporting Chunk 0 to PTE")
`
	const loggingScript = wait + `import logging
logging.basicConfig(level=logging.INFO, format="[%(levelname)s %(asctime)s %(filename)s:%(lineno)s] %(message)s")
logging.info("calling MultiModalManager::quantize")
logging.info(released(sys.argv[1], float(sys.argv[2])))
logging.info("MultiModalManager::quantize completed in 0.6s")
`
	tests := []struct {
		name     string
		script   string
		env      []string
		rules    []StageRule
		marker   string
		limit    string // how long the script waits for its release, in seconds
		stage    string
		want     float64
		released bool
	}{
		{"print, unbuffered", printScript, []string{"PYTHONUNBUFFERED=1"}, mtkRules,
			"Preparing Model Calibration Inputs...", "60", "calibration_inputs", 0.6, true},
		{"print, buffered: timed at exit", printScript, nil, mtkRules,
			"Preparing Model Calibration Inputs...", "0.5", "calibration_inputs", 0, false},
		{"logging, buffered is fine", loggingScript, nil, qnnRules,
			"calling MultiModalManager::quantize", "60", "quantize", 0.6, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk, g := newFakeClock(time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)), newGates(t)
			out := &hookWriter{hook: func(line string) {
				if strings.HasSuffix(line, tc.marker) {
					clk.Advance(600 * time.Millisecond)
					g.open("go")
				}
			}}
			res, err := Tool(context.Background(), Spec{
				Name: "py", Argv: []string{python, "-c", tc.script, filepath.Join(g.dir, "go"), tc.limit}, Env: tc.env,
				Output: out, Mode: LogPrefixed, SampleEvery: -1, Stages: tc.rules, clock: clk,
			})
			require.NoError(t, err)
			if tc.released {
				assert.Regexp(t, `\] (\[INFO .*\] )?released\n`, out.String())
			} else {
				assert.Contains(t, out.String(), "] not released\n")
			}
			got, ok := res.Timings.Stage(tc.stage)
			require.True(t, ok, "no stage %s in %s", tc.stage, res.Timings)
			assert.Equal(t, tc.want, got.Seconds, "%s (%s)", tc.stage, res.Timings)
			assert.Equal(t, 0.6, res.Seconds, "the run ends after the clock moved")
		})
	}
}
