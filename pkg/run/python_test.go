package run

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
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
func TestPythonBuffering(t *testing.T) {
	python := pythonOrSkip(t)
	const printScript = `import time
time.sleep(0.3)
print("Preparing Model Calibration Inputs...")
time.sleep(0.6)
print("Exporting Chunk 0 to PTE")
time.sleep(0.3)
`
	const loggingScript = `import logging, time
logging.basicConfig(level=logging.INFO, format="[%(levelname)s %(asctime)s %(filename)s:%(lineno)s] %(message)s")
time.sleep(0.3)
logging.info("calling MultiModalManager::quantize")
time.sleep(0.6)
logging.info("MultiModalManager::quantize completed in 0.6s")
time.sleep(0.3)
`
	tests := []struct {
		name   string
		script string
		env    []string
		rules  []StageRule
		stage  string
		want   float64
	}{
		{"print, unbuffered", printScript, []string{"PYTHONUNBUFFERED=1"}, StagesMediaTek, "calibration_inputs", 0.6},
		{"print, buffered: timed at exit", printScript, nil, StagesMediaTek, "calibration_inputs", 0},
		{"logging, buffered is fine", loggingScript, nil, StagesQNN, "quantize", 0.6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Tool(context.Background(), Spec{
				Name: "py", Argv: []string{python, "-c", tc.script}, Env: tc.env, Output: io.Discard,
				SampleEvery: -1, Stages: tc.rules,
			})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := res.Timings.Stage(tc.stage)
			if got.Seconds < tc.want-0.1 || got.Seconds > tc.want+0.35 {
				t.Errorf("%s = %.1f s, want about %.1f s (%s)", tc.stage, got.Seconds, tc.want, res.Timings)
			}
		})
	}
}
