package watch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/internal/watch/ghtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
