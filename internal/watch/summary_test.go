package watch_test

import (
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/golden"
	"github.com/experimentalmachines/exe-expo/internal/watch"
)

func TestMarkdownGolden(t *testing.T) {
	state := &watch.State{Version: 1, Models: map[string]*watch.Entry{
		"Qwen/Qwen3-1.7B": {Status: watch.Pending, Backends: map[string]*watch.BackendState{
			"xnnpack": {Status: watch.Dispatched}, "vulkan": {Status: watch.Pending},
			"enn": {Status: watch.Skipped, Reason: "waiting for an LLM path upstream"},
			"qnn": {Status: watch.Skipped, Reason: "no entry | registry"},
		}},
		"Qwen/Qwen3-30B-A3B-FP8": {Status: watch.Skipped, Reasons: []string{"name matches excluded marker(s) fp8", "named size 30B is above 4B"}},
		"Qwen/Qwen3-0.6B":        {Status: watch.Retry, Reasons: []string{"metadata fetch failed: GitHub\nanswered 500"}},
		"HuggingFaceTB/Qwen3-0.6B": {Status: watch.Pending, Backfill: "2026-12-01T11:00:00Z", Backends: map[string]*watch.BackendState{
			"xnnpack": {Status: watch.Pending, LastError: "x"},
		}},
	}}
	tests := []struct {
		name string
		sum  watch.Summary
	}{
		{"seeded", watch.Summary{Seeded: 1500, State: &watch.State{Models: map[string]*watch.Entry{}}}},
		{"checked", watch.Summary{
			New:        []string{"Qwen/Qwen3-30B-A3B-FP8", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-0.6B"},
			Backfilled: []string{"HuggingFaceTB/Qwen3-0.6B"},
			Dispatched: []string{"Qwen/Qwen3-1.7B -> xnnpack"},
			Failed:     []string{"HuggingFaceTB/Qwen3-0.6B -> xnnpack: dispatching export-xnnpack.yml for HuggingFaceTB/Qwen3-0.6B failed: GitHub answered 500: Internal Server Error"},
			Stage:      "xnnpack",
			State:      state,
		}},
		{"dry-run", watch.Summary{DryRun: true, New: []string{"Qwen/Qwen3-1.7B"}, Dispatched: []string{"Qwen/Qwen3-1.7B -> xnnpack"}, Stage: "xnnpack", State: state}},
		{"idle", watch.Summary{State: state}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.sum.Markdown()
			golden.Check(t, filepath.Join("testdata", "summary-"+tc.name+".md"), []byte(got))
		})
	}
}
