package exportllm_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/run/runtest"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// info is the prefix Hydra's log format gives export_llm's lines.
const info = "[INFO 2026-12-02 10:00:00,000 x.py:1] "

// TestStages replays the lines export_llm prints (docs/research/run.md), byte for byte as
// the stand-in writes them, on a clock that moves only at the script's pauses: every
// figure is exact.
func TestStages(t *testing.T) {
	writes, err := runtest.Script(
		"s:300ms", "p:"+info+"Checkpoint dtype: torch.bfloat16", "s:600ms",
		"p:"+info+"Model after source transforms: Transformer(", "p:  (layers): ModuleList()", "p:)",
		"p:"+info+"Exporting with:", "p:"+info+"inputs: (tensor([[2, 3, 4]]),)", "s:300ms",
		"p:"+info+"Lowering model using following partitioner(s): ", "p:"+info+"--> XnnpackPartitioner", "s:900ms",
		"p:"+info+"Required memory for activation in bytes: [0, 1048576]", "s:200ms",
		"p:"+info+"Saved exported program to /work/out/Qwen3-0.6B-8da4w-2k.pte", "s:300ms",
	)
	require.NoError(t, err)
	got, err := run.Replay(exportllm.Stages, writes)
	require.NoError(t, err)
	want := run.Timings{TotalSeconds: 2.6, Stages: []run.StageTime{
		{Stage: "load", Seconds: 0.3, Share: 0.115, Count: 1}, {Stage: "quantize", Seconds: 0.6, Share: 0.231, Count: 1},
		{Stage: "export", Seconds: 0.3, Share: 0.115, Count: 1}, {Stage: "lower", Seconds: 0.9, Share: 0.346, Count: 1},
		{Stage: "save", Seconds: 0.2, Share: 0.077, Count: 1}, {Stage: "other", Seconds: 0.3, Share: 0.115},
	}}
	assert.Empty(t, cmp.Diff(want, got), "timings (-want +got)")
}
