package watch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/internal/watch/ghtest"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func TestFirstRunRecordsWithoutChecking(t *testing.T) {
	r := newRig(t)
	sha := r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.add("HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct")
	r.add("google/gemma-3-1b-it", "google/gemma-3-1b-it") // google is not watched here

	sum := r.pass(nil, watch.Options{})

	assert.Equal(t, 2, sum.Seeded)
	assert.Empty(t, r.fetched, "the first run reads no model")
	assert.Empty(t, r.gh.Dispatches())
	e := sum.State.Models["Qwen/Qwen3-0.6B"]
	require.NotNil(t, e)
	assert.Equal(t, watch.Seeded, e.Status)
	assert.Equal(t, sha, e.SHA)
	assert.Equal(t, "2026-12-01T11:00:00Z", e.FirstSeen)
	assert.Equal(t, "2026-12-01T11:00:00Z", sum.State.SeededAt)
	assert.NotContains(t, sum.State.Models, "google/gemma-3-1b-it")
	assert.Contains(t, sum.Markdown(), "First run: recorded 2 existing models")
}

func TestNewModelsAreCheckedOnce(t *testing.T) {
	r := newRig(t)
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	seeded := r.pass(nil, watch.Options{})
	sha := r.add("Qwen/Qwen3-1.7B", "Qwen/Qwen3-1.7B")
	r.add("Qwen/Qwen3-30B-A3B-FP8", "Qwen/Qwen3-30B-A3B-FP8")
	r.add("Qwen/Qwen3.8-1B", "Qwen/Qwen3-0.6B")

	sum := r.pass(seeded.State, watch.Options{})

	assert.ElementsMatch(t, []string{"Qwen/Qwen3-1.7B", "Qwen/Qwen3-30B-A3B-FP8", "Qwen/Qwen3.8-1B"}, sum.New)
	assert.Equal(t, []string{"export-xnnpack.yml Qwen/Qwen3-1.7B@" + sha}, r.dispatched())
	assert.Equal(t, "xnnpack", sum.Stage)
	assert.ElementsMatch(t, []string{"Qwen/Qwen3-1.7B", "Qwen/Qwen3.8-1B"}, r.fetched, "a name refusal reads nothing from the repo")
	fp8 := sum.State.Models["Qwen/Qwen3-30B-A3B-FP8"]
	assert.Equal(t, watch.Skipped, fp8.Status)
	assert.Contains(t, strings.Join(fp8.Reasons, "\n"), "excluded marker(s) fp8")
	odd := sum.State.Models["Qwen/Qwen3.8-1B"]
	assert.Equal(t, watch.Skipped, odd.Status)
	assert.Contains(t, strings.Join(odd.Reasons, "\n"), "not named like a qwen3 release")
	ok := sum.State.Models["Qwen/Qwen3-1.7B"]
	assert.Equal(t, sha, ok.SHA)
	assert.Equal(t, "qwen3", ok.Family)
	assert.Equal(t, watch.Dispatched, ok.Backends["xnnpack"].Status)
	assert.Equal(t, watch.Pending, ok.Backends["vulkan"].Status)
	assert.Equal(t, watch.Skipped, ok.Backends["enn"].Status)
	assert.NotEmpty(t, ok.Backends["enn"].Reason)
	assert.Equal(t, watch.Seeded, sum.State.Models["Qwen/Qwen3-0.6B"].Status, "a seeded model is not checked")

	r.fetched = nil
	again := r.pass(sum.State, watch.Options{})
	assert.Empty(t, again.New)
	assert.Empty(t, r.fetched, "seen models are not read again")
	assert.Len(t, r.gh.Dispatches(), 1, "the xnnpack stage waits for its run; nothing is dispatched twice")
}

func TestStagesRunOneBackendAfterTheOther(t *testing.T) {
	r := newRig(t)
	seeded := r.pass(nil, watch.Options{})
	sha := r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	state := r.pass(seeded.State, watch.Options{}).State
	require.Equal(t, []string{"export-xnnpack.yml Qwen/Qwen3-0.6B@" + sha}, r.dispatched())

	sum := r.pass(state, watch.Options{})
	assert.Equal(t, "xnnpack", sum.Stage, "the XNNPACK run is still queued: the stage holds")
	assert.Empty(t, sum.Dispatched)

	for _, stage := range []string{"vulkan", "qnn", "mediatek"} {
		prev := r.dispatched()[len(r.dispatched())-1]
		r.gh.Complete(strings.Fields(prev)[0])
		// a ghost run, titled with the bare workflow name, does not hold a stage
		r.gh.AddRun(ghtest.Run{Workflow: strings.Fields(prev)[0], Title: "Export", Status: "queued"})
		sum = r.pass(state, watch.Options{})
		assert.Equal(t, stage, sum.Stage)
		assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> " + stage}, sum.Dispatched)
	}
	assert.Equal(t, []string{
		"export-xnnpack.yml Qwen/Qwen3-0.6B@" + sha, "export-vulkan.yml Qwen/Qwen3-0.6B@" + sha,
		"export-qnn.yml Qwen/Qwen3-0.6B@" + sha, "export-mediatek.yml Qwen/Qwen3-0.6B@" + sha,
	}, r.dispatched())
	assert.Equal(t, watch.Dispatched, state.Models["Qwen/Qwen3-0.6B"].Status, "no backend left pending")
}

func TestBudgetIsSharedAndCarriesOver(t *testing.T) {
	r := newRig(t)
	r.cfg.Watch.MaxDispatchPerRun = 2
	seeded := r.pass(nil, watch.Options{})
	for _, id := range []string{"Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B"} {
		r.add(id, id)
	}
	sum := r.pass(seeded.State, watch.Options{})
	assert.Len(t, sum.Dispatched, 2)
	assert.Len(t, r.dispatched(), 2)

	sum = r.pass(sum.State, watch.Options{})
	assert.Equal(t, "xnnpack", sum.Stage, "the stage keeps its queue before the next starts")
	assert.Len(t, sum.Dispatched, 1, "the third model waited for the next run")
	got := map[string]int{}
	for _, d := range r.dispatched() {
		got[strings.Split(strings.Fields(d)[1], "@")[0]]++
	}
	assert.Equal(t, map[string]int{"Qwen/Qwen3-0.6B": 1, "Qwen/Qwen3-1.7B": 1, "Qwen/Qwen3-4B": 1}, got)
}

func TestOrgRuleAndBackfill(t *testing.T) {
	tests := []struct {
		name     string
		seedWith bool // the model exists before the first run
		seedRun  bool // backfill on the first (seeding) run
	}{
		{name: "backfill of a model refused by the org rule"},
		{name: "backfill of a seeded model", seedWith: true},
		{name: "backfill during seeding", seedWith: true, seedRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			const id = "HuggingFaceTB/Qwen3-0.6B"
			if tc.seedWith {
				r.add(id, "Qwen/Qwen3-0.6B")
			}
			var state *watch.State
			if !tc.seedRun {
				state = r.pass(nil, watch.Options{}).State
			}
			if !tc.seedWith {
				r.add(id, "Qwen/Qwen3-0.6B")
				sum := r.pass(state, watch.Options{})
				require.Equal(t, watch.Skipped, sum.State.Models[id].Status)
				require.Equal(t, []string{"not one of HuggingFaceTB's own families (smollm2, smollm3)"}, sum.State.Models[id].Reasons)
				state = sum.State
			}
			firstSeen := ""
			if state != nil {
				firstSeen = state.Models[id].FirstSeen
			}
			sum := r.pass(state, watch.Options{Backfill: []string{id}})
			assert.Equal(t, []string{id}, sum.Backfilled)
			assert.Equal(t, []string{id + " -> xnnpack"}, sum.Dispatched)
			e := sum.State.Models[id]
			assert.Equal(t, r.now.Format("2006-01-02T15:04:05Z"), e.Backfill)
			if firstSeen != "" {
				assert.Equal(t, firstSeen, e.FirstSeen, "backfill keeps when the model was first seen")
			}
			assert.Len(t, r.dispatched(), 1)
		})
	}
}

func TestFetchFailuresRetryThenSkip(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.hub.Inject(hubtest.Fault{PathContains: "/api/models/Qwen/Qwen3-0.6B", Times: -1, Status: 500})

	for run := 1; run < watch.MaxAttempts; run++ {
		sum := r.pass(state, watch.Options{})
		e := sum.State.Models["Qwen/Qwen3-0.6B"]
		assert.Equal(t, watch.Retry, e.Status, "run %d", run)
		assert.Equal(t, run, e.Attempts)
		require.Len(t, e.Reasons, 1)
		assert.True(t, strings.HasPrefix(e.Reasons[0], "metadata fetch failed: "), e.Reasons[0])
		assert.Contains(t, sum.Markdown(), "metadata unreadable, retried next run")
	}
	sum := r.pass(state, watch.Options{})
	e := sum.State.Models["Qwen/Qwen3-0.6B"]
	assert.Equal(t, watch.Skipped, e.Status)
	assert.Contains(t, e.Reasons[0], fmt.Sprintf("metadata unreadable after %d runs: ", watch.MaxAttempts))

	r.hub.ClearFaults()
	sum = r.pass(state, watch.Options{})
	assert.Empty(t, sum.New, "a skipped model is not read again")
	assert.Empty(t, r.gh.Dispatches())
}

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

func TestFailedDispatchStaysPending(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.gh.FailDispatch(func(ghtest.Dispatch) (int, bool) { return 500, false })

	sum := r.pass(state, watch.Options{})
	assert.Len(t, r.gh.Dispatches(), 4, "four attempts")
	assert.Equal(t, []time.Duration{10 * time.Second, 30 * time.Second, 10 * time.Second, 45 * time.Second, 10 * time.Second, 60 * time.Second}, r.sleeps)
	require.Len(t, sum.Failed, 1)
	assert.Equal(t, "Qwen/Qwen3-0.6B -> xnnpack: dispatching export-xnnpack.yml for Qwen/Qwen3-0.6B failed: GitHub answered 500: Internal Server Error", sum.Failed[0])
	b := state.Models["Qwen/Qwen3-0.6B"].Backends["xnnpack"]
	assert.Equal(t, watch.Pending, b.Status)
	assert.Equal(t, "2026-12-01T12:00:00Z: dispatching export-xnnpack.yml for Qwen/Qwen3-0.6B failed: GitHub answered 500: Internal Server Error", b.LastError)
	assert.Contains(t, sum.Markdown(), "Could not dispatch (still pending, retried next run):\n\n- Qwen/Qwen3-0.6B -> xnnpack: ")

	r.gh.FailDispatch(nil)
	sum = r.pass(state, watch.Options{})
	assert.Empty(t, sum.Failed)
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched)
	assert.Empty(t, b.LastError)
	assert.Equal(t, watch.Dispatched, b.Status)
}

func TestDispatchAnswered502AfterTheRunWasCreated(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.gh.FailDispatch(func(ghtest.Dispatch) (int, bool) { return 502, true })

	sum := r.pass(state, watch.Options{})
	assert.Len(t, r.gh.Dispatches(), 1, "the run exists: the dispatch is not repeated")
	assert.Len(t, r.gh.Runs(), 1)
	assert.Empty(t, sum.Failed)
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched)
	assert.Equal(t, watch.Dispatched, state.Models["Qwen/Qwen3-0.6B"].Backends["xnnpack"].Status)
}

func TestRunInFlightCountsAsDispatched(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	sha := r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.gh.AddRun(ghtest.Run{Workflow: "export-xnnpack.yml", Title: "XNNPACK (CPU): Qwen/Qwen3-0.6B@" + sha, Status: "in_progress"})

	sum := r.pass(state, watch.Options{})
	assert.Empty(t, r.gh.Dispatches())
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched)
}

func TestRequeueDispatchesAgain(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.pass(state, watch.Options{})
	r.gh.Complete("export-xnnpack.yml")
	r.pass(state, watch.Options{}) // vulkan
	r.gh.Complete("export-vulkan.yml")
	require.Len(t, r.dispatched(), 2)

	sum := r.pass(state, watch.Options{Requeue: true})
	e := state.Models["Qwen/Qwen3-0.6B"]
	assert.Equal(t, "xnnpack", sum.Stage, "requeued backends start again from the first stage")
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched)
	assert.Equal(t, watch.Pending, e.Backends["vulkan"].Status)
	assert.Equal(t, r.now.Format("2006-01-02T15:04:05Z"), e.Backends["vulkan"].Requeued)
	assert.Empty(t, e.Backends["vulkan"].At)
	assert.Equal(t, watch.Pending, e.Status)
}

func TestUnreadableStageFailsThePass(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.gh.FailRuns("export-xnnpack.yml", 503)
	_, err := r.w.Pass(context.Background(), state, watch.Options{})
	require.Error(t, err)
	assert.Equal(t, "could not tell whether export-xnnpack.yml has runs in flight: listing the queued runs of export-xnnpack.yml: GitHub answered 503: Service Unavailable", err.Error())
}

func TestEveryPageOfALargeOrg(t *testing.T) {
	r := newRig(t)
	r.cfg.Watch.OrgFamilies = map[string][]string{"Qwen": {"qwen3"}}
	for i := range 1500 {
		_, err := r.hub.AddModel(fmt.Sprintf("Qwen/m-%04d", i), nil)
		require.NoError(t, err)
	}
	r.add("Other/Qwen3-0.6B", "") // another org is not listed
	sum := r.pass(nil, watch.Options{})
	assert.Equal(t, 1500, sum.Seeded)
	assert.Len(t, sum.State.Models, 1500)
	assert.Equal(t, 15, *r.lists, "hubtest pages by 100")
}

func TestRefusedDispatchIsNotRetried(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.gh.FailDispatch(func(ghtest.Dispatch) (int, bool) { return 404, false })

	sum := r.pass(state, watch.Options{})
	assert.Len(t, r.gh.Dispatches(), 1, "a refusal is final for this run")
	assert.Empty(t, r.sleeps)
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack: dispatching export-xnnpack.yml for Qwen/Qwen3-0.6B failed: GitHub answered 404: Not Found"}, sum.Failed)
	assert.Equal(t, watch.Pending, state.Models["Qwen/Qwen3-0.6B"].Backends["xnnpack"].Status)
}

func TestUnreadableRunsDoNotStopQueuedWork(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	r.gh.FailRuns("export-xnnpack.yml", 500)

	sum := r.pass(state, watch.Options{})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched, "with work queued, an unreadable run list counts as none in flight")
	assert.Len(t, r.gh.Dispatches(), 1)
}

func TestRunInFlightOnALaterPage(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	sha := r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	for i := range 150 {
		r.gh.AddRun(ghtest.Run{Workflow: "export-xnnpack.yml", Title: fmt.Sprintf("XNNPACK (CPU): Other/m-%d@abc", i), Status: "queued"})
	}
	r.gh.AddRun(ghtest.Run{Workflow: "export-xnnpack.yml", Title: "XNNPACK (CPU): Qwen/Qwen3-0.6B@" + sha, Status: "queued"})

	sum := r.pass(state, watch.Options{})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched)
	assert.Empty(t, r.gh.Dispatches(), "the model's run, on the second page of runs, counts as dispatched")
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

// TestRuntimeMovedQueuesRebuilds: when the pipeline's runtime moves, a pass finds in the
// catalog the folders built for the old one and dispatches their backend again, once: the
// next passes, while the new files are on their way, do not queue it again.
func TestRuntimeMovedQueuesRebuilds(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	state = r.pass(state, watch.Options{}).State
	require.Equal(t, watch.Dispatched, state.Models["Qwen/Qwen3-0.6B"].Backends["xnnpack"].Status)
	require.Len(t, r.gh.Dispatches(), 1)

	built := catalog.Runtime{ExecuTorch: "1.4.0"}
	cat := catalog.New("experimentalmachines")
	cat.Models["experimentalmachines/Qwen3-0.6B-ExecuTorch"] = &catalog.Model{Source: "Qwen/Qwen3-0.6B", Folders: map[string]*catalog.Folder{
		"xnnpack": {Backend: "xnnpack", Runtime: built, Windows: []catalog.Window{{Context: 2048, SourceRevision: "abc"}}},
	}}
	r.w.Catalog = func(context.Context) (*catalog.Catalog, error) { return cat, nil }
	now := catalog.Runtime{ExecuTorch: "1.4.0"}
	r.w.Runtime = func(string) catalog.Runtime { return now }

	sum := r.pass(state, watch.Options{})
	assert.Empty(t, sum.Rebuilds, "files built for the pipeline's runtime are not rebuilt")
	assert.Len(t, r.gh.Dispatches(), 1)

	now = catalog.Runtime{ExecuTorch: "1.5.0"}
	r.gh.Complete("export-xnnpack.yml") // the first export finished long ago
	sum = r.pass(sum.State, watch.Options{})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B xnnpack: built for ExecuTorch 1.4.0, now ExecuTorch 1.5.0"}, sum.Rebuilds)
	require.Len(t, r.gh.Dispatches(), 2, "the rebuild is dispatched in the usual stage")
	assert.Contains(t, sum.Markdown(), "Queued again, built for another runtime than the pipeline's")
	b := sum.State.Models["Qwen/Qwen3-0.6B"].Backends["xnnpack"]
	assert.Equal(t, "ExecuTorch 1.5.0", b.Runtime)

	sum = r.pass(sum.State, watch.Options{})
	assert.Empty(t, sum.Rebuilds, "dispatched for 1.5.0 already: not queued again while the files are on their way")
	assert.Len(t, r.gh.Dispatches(), 2)

	r.w.Catalog = func(context.Context) (*catalog.Catalog, error) { return nil, errors.New("the Hub answered 500") }
	sum = r.pass(sum.State, watch.Options{})
	assert.Contains(t, sum.Markdown(), "Note: no rebuild check: the catalog could not be read: the Hub answered 500")
}
