package mediatek_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/mediatek"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/run/runtest"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStages replays the lines MediaTek's export script prints for two chunks
// (docs/research/run.md), byte for byte as the stand-in writes them, on a clock that moves
// only at the script's pauses. Per chunk: aten_export 0.2 s before calibration and 0.2 s
// after, calibration 0.3 s from its first redraw, lowering 0.3 s, 0.1 s after the Dest line.
func TestStages(t *testing.T) {
	steps := append([]string{"s:200ms", "p:Preparing Model Calibration Inputs...", "s:400ms"}, chunkLines("0")...)
	writes, err := runtest.Script(append(steps, chunkLines("1")...)...)
	require.NoError(t, err)
	got, err := run.Replay(mediatek.Stages, writes)
	require.NoError(t, err)
	want := run.Timings{TotalSeconds: 2.8, Stages: []run.StageTime{
		{Stage: "load", Seconds: 0.2, Share: 0.071, Count: 1}, {Stage: "calibration_inputs", Seconds: 0.4, Share: 0.143, Count: 1},
		{Stage: "aten_export", Seconds: 0.8, Share: 0.286, Count: 4}, {Stage: "calibration", Seconds: 0.6, Share: 0.214, Count: 2},
		{Stage: "lowering", Seconds: 0.6, Share: 0.214, Count: 2}, {Stage: "other", Seconds: 0.2, Share: 0.071},
	}}
	assert.Empty(t, cmp.Diff(want, got), "timings (-want +got)")
}

// chunkLines is what qwen.py prints for one chunk (ExecuTorch v1.4.0, export_to_et_ir).
func chunkLines(i string) []string {
	return []string{
		"p:Exporting Chunk " + i + " to PTE", "p:Getting pre autograd ATen Dialect Graph", "s:200ms",
		"r:Calibrating Model:   0%|          | 0/9 [00:00<?, ?it/s]", "s:300ms",
		"r:Calibrating Model: 100%|##########| 9/9 [00:00<00:00]", "n",
		"p:Getting ATen Dialect Graph for Qwen3-0.6B_A16W4_4_chunks 128t512c chunk " + i, "s:100ms",
		"p:Getting ATen Dialect Graph for Qwen3-0.6B_A16W4_4_chunks 1t512c chunk " + i, "s:100ms",
		"p:Delegating Edge Program to Neuropilot Backend", "s:300ms",
		"p:Transforming delegated program to executorch backend", "p:", "p: Model Size: 86052736",
		"p:Qwen3-0.6B_A16W4_4_chunks ET Model chunk " + i + " Dest: pte/x/x_" + i + ".pte", "s:100ms",
	}
}
