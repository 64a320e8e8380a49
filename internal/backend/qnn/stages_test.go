package qnn_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/qnn"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/run/runtest"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStages replays the lines Qualcomm's llama.py prints (docs/research/run.md), byte for
// byte as the stand-in writes them, on a clock that moves only at the script's pauses:
// quantize is the 0.3 s before calibration and the 0.3 s after it.
func TestStages(t *testing.T) {
	const info = "p:[INFO 2026-12-02 10:00:00,000 x.py:1] "
	writes, err := runtest.Script(
		"s:200ms", info+"calling HybridTextDecoder::__init__", "s:100ms",
		info+"calling MultiModalManager::quantize", "s:300ms", info+"calling TextDecoder::quantize", "s:200ms",
		"r:  0%|          | 0/1 [00:00<?, ?it/s]", "s:600ms", "r:100%|##########| 1/1 [00:00<00:00]", "n",
		info+"Calibration complete for prepare_pt2e", "s:300ms",
		info+"TextDecoder::quantize completed in 1.4s", info+"MultiModalManager::quantize completed in 1.7s", "s:200ms",
		info+"calling MultiModalManager::compile", info+"calling HybridTextDecoder::compile", "s:800ms",
		info+"HybridTextDecoder::compile completed in 0.8s", info+"MultiModalManager::compile completed in 0.8s",
		"s:200ms", "p:Finish compile_only and save to /work/artifact",
	)
	require.NoError(t, err)
	got, err := run.Replay(qnn.Stages, writes)
	require.NoError(t, err)
	want := run.Timings{TotalSeconds: 2.9, Stages: []run.StageTime{
		{Stage: "load", Seconds: 0.3, Share: 0.103, Count: 1}, {Stage: "quantize", Seconds: 0.6, Share: 0.207, Count: 2},
		{Stage: "calibration", Seconds: 0.8, Share: 0.276, Count: 1}, {Stage: "htp_compile", Seconds: 0.8, Share: 0.276, Count: 1},
		{Stage: "other", Seconds: 0.4, Share: 0.138},
	}}
	assert.Empty(t, cmp.Diff(want, got), "timings (-want +got)")
}
