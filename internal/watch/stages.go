package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/experimentalmachines/exe-expo/internal/netutil"
)

// inFlightStatuses are the run statuses that hold a stage open.
var inFlightStatuses = map[string]bool{"queued": true, "in_progress": true, "waiting": true, "pending": true, "requested": true}

// dispatchAttempts and the waits between them ride out GitHub's transient 5xx answers; the
// run list is read again after each failure because GitHub has answered 502 after creating
// the run.
const dispatchAttempts = 4

const (
	recheckWait = 10 * time.Second
	backoffStep = 15 * time.Second
)

// stages dispatches the first stage that has work or still has runs in flight, spending
// one budget shared by every stage; later stages wait for a later run. Each stage's runs
// are listed once, and again only after a failed dispatch, to spare the API's rate limit.
func (w *Watcher) stages(ctx context.Context, state *State, sum *Summary, dispatch bool) error {
	budget := w.Config.Watch.MaxDispatchPerRun
	for _, st := range w.Stages {
		queue := queueFor(state, st.Backend)
		if len(queue) == 0 && !dispatch {
			continue
		}
		var runs []Run
		if dispatch {
			var err error
			// with work queued, an unreadable list counts as no run in flight: a failed
			// dispatch reads it again
			if runs, err = w.Actions.InFlight(ctx, st.Workflow); err != nil && len(queue) == 0 {
				return fmt.Errorf("could not tell whether %s has runs in flight: %w", st.Workflow, err)
			}
		}
		if len(queue) == 0 && !stageBusy(runs) {
			continue
		}
		sum.Stage = st.Backend
		for _, id := range queue {
			if budget == 0 {
				break
			}
			budget--
			w.dispatchOne(ctx, state, sum, st, id, dispatch, runs)
		}
		return nil
	}
	return nil
}

// queueFor lists the pending models whose backend is pending, oldest first.
func queueFor(state *State, backend string) []string {
	var ids []string
	for id, e := range state.Models {
		if b := e.Backends[backend]; e.Status == Pending && b != nil && b.Status == Pending {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := state.Models[ids[i]], state.Models[ids[j]]
		if a.FirstSeen != b.FirstSeen {
			return a.FirstSeen < b.FirstSeen
		}
		return ids[i] < ids[j]
	})
	return ids
}

// stageBusy says whether any run holds the stage. Runs titled without "@" are ghosts (a
// run named after the bare workflow) and do not hold a stage.
func stageBusy(runs []Run) bool {
	for _, r := range runs {
		if inFlightStatuses[r.Status] && strings.Contains(r.Title, "@") {
			return true
		}
	}
	return false
}

// modelInFlight says whether one of runs is the model's (run names are
// "<BACKEND>: <model>@<revision>").
func modelInFlight(runs []Run, id string) bool {
	for _, r := range runs {
		if inFlightStatuses[r.Status] && strings.Contains(r.Title, " "+id+"@") {
			return true
		}
	}
	return false
}

// dispatchOne starts one model's export and records the outcome.
func (w *Watcher) dispatchOne(ctx context.Context, state *State, sum *Summary, st Stage, id string, dispatch bool, runs []Run) {
	e := state.Models[id]
	b := e.Backends[st.Backend]
	if dispatch {
		if err := w.dispatch(ctx, st.Workflow, id, e.SHA, runs); err != nil {
			b.LastError = clip(fmt.Sprintf("%s: %v", w.stamp(), err), maxError)
			sum.Failed = append(sum.Failed, fmt.Sprintf("%s -> %s: %v", id, st.Backend, err))
			return
		}
	}
	b.Status, b.At, b.LastError = Dispatched, w.stamp(), ""
	if w.Runtime != nil {
		b.Runtime = w.Runtime(st.Backend).String()
	}
	line := fmt.Sprintf("%s -> %s", id, st.Backend)
	if c := b.Cost; c != nil {
		line += " (" + c.Line() + ")"
		sum.Cost.Jobs, sum.Cost.Minutes = sum.Cost.Jobs+c.Jobs, sum.Cost.Minutes+c.Minutes
		sum.Cost.USD = math.Round((sum.Cost.USD+c.USD)*100) / 100
	}
	sum.Dispatched = append(sum.Dispatched, line)
}

// dispatch runs the workflow unless a run for the model is already in flight (a save that
// failed after an earlier dispatch, or a concurrent watcher), retrying failures and
// reading the runs again after each: a run that exists counts as dispatched.
func (w *Watcher) dispatch(ctx context.Context, workflow, id, revision string, runs []Run) error {
	if modelInFlight(runs, id) {
		return nil
	}
	var err error
	for attempt := 1; attempt <= dispatchAttempts; attempt++ {
		if err = w.Actions.Dispatch(ctx, workflow, id, revision); err == nil {
			return nil
		}
		if attempt == dispatchAttempts || permanent(err) {
			break
		}
		if werr := w.sleep(ctx, recheckWait); werr != nil {
			break
		}
		if runs, lerr := w.Actions.InFlight(ctx, workflow); lerr == nil && modelInFlight(runs, id) {
			return nil
		}
		if werr := w.sleep(ctx, backoffStep*time.Duration(attempt+1)); werr != nil {
			break
		}
	}
	return fmt.Errorf("dispatching %s for %s failed: %w", workflow, id, err)
}

// permanent says whether err is a refusal that asking again cannot change, or a GitHub
// this host cannot reach, which the waits between attempts would not bring back within
// the run (the model stays pending for the next run).
func permanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent() || netutil.Unreachable(err) != nil
}

func (w *Watcher) sleep(ctx context.Context, d time.Duration) error {
	if w.Sleep != nil {
		return w.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// clip cuts s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
