package watch_test

import (
	"context"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/stretchr/testify/assert"
)

func TestDryRunDispatchesNothing(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	sum := r.pass(state, watch.Options{DryRun: true})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched, "the summary says what would be dispatched")
	assert.Empty(t, r.gh.Dispatches())
	assert.Contains(t, sum.Markdown(), "Dry run: nothing was dispatched")
}

// TestDryRunShowsRebuilds: a catalog holding folders built for an older runtime (1.4.0, as
// every folder published before the move to 1.5.1 is) shows them due for a rebuild in a dry
// run, every folder of every repo, and nothing is dispatched.
func TestDryRunShowsRebuilds(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	old := catalog.Runtime{ExecuTorch: "1.4.0"}
	cat := catalog.New("experimentalmachines")
	cat.Models["experimentalmachines/Qwen3-0.6B-ExecuTorch"] = &catalog.Model{Source: "Qwen/Qwen3-0.6B", Folders: map[string]*catalog.Folder{
		"xnnpack": {Backend: "xnnpack", Runtime: old, Windows: []catalog.Window{{Context: 2048, SourceRevision: "abc"}}},
		"vulkan":  {Backend: "vulkan", Runtime: old, Windows: []catalog.Window{{Context: 2048, SourceRevision: "abc"}}},
	}}
	cat.Models["experimentalmachines/SmolLM2-360M-Instruct-ExecuTorch"] = &catalog.Model{Source: "HuggingFaceTB/SmolLM2-360M-Instruct", Folders: map[string]*catalog.Folder{
		"xnnpack": {Backend: "xnnpack", Runtime: catalog.Runtime{ExecuTorch: "1.5.1"}, Windows: []catalog.Window{{Context: 4096, SourceRevision: "def"}}},
	}}
	r.w.Catalog = func(context.Context) (*catalog.Catalog, error) { return cat, nil }
	r.w.Runtime = func(string) catalog.Runtime { return catalog.Runtime{ExecuTorch: "1.5.1"} }

	sum := r.pass(state, watch.Options{DryRun: true})
	assert.Equal(t, []string{
		"Qwen/Qwen3-0.6B vulkan: built for ExecuTorch 1.4.0, now ExecuTorch 1.5.1",
		"Qwen/Qwen3-0.6B xnnpack: built for ExecuTorch 1.4.0, now ExecuTorch 1.5.1",
	}, sum.Rebuilds, "the 1.5.1 folder is current")
	assert.Empty(t, r.gh.Dispatches())
	md := sum.Markdown()
	assert.Contains(t, md, "Queued again, built for another runtime than the pipeline's")
	assert.Contains(t, md, "Dry run: nothing was dispatched")
}

// TestDryRunStatesTheCost: with a cost for each pending backend, the dry run's summary
// names each model's export cost and the run's total before anything is dispatched.
func TestDryRunStatesTheCost(t *testing.T) {
	r := newRig(t)
	var asked []string
	r.w.Cost = func(src *model.Source, backend string) *watch.Cost {
		asked = append(asked, src.ID+" "+backend)
		return &watch.Cost{Jobs: 5, Minutes: 55, USD: 0.55}
	}
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	sum := r.pass(state, watch.Options{DryRun: true})
	assert.Contains(t, asked, "Qwen/Qwen3-0.6B xnnpack")
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack (5 export job(s), 55 runner minutes, $0.55)"}, sum.Dispatched)
	assert.Equal(t, watch.Cost{Jobs: 5, Minutes: 55, USD: 0.55}, sum.Cost)
	assert.Contains(t, sum.Markdown(), "This run would start 5 export job(s), 55 runner minutes, $0.55, from the measured export times and runner prices in pipeline.yaml.")
	assert.Empty(t, r.gh.Dispatches())
}
