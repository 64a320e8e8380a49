package watch

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// MaxAttempts is how many runs may fail to read a model's metadata before it is skipped:
// a repo that is still being uploaded reads later, one that is broken should stop costing
// a fetch every run.
const MaxAttempts = 5

// maxError bounds a stored dispatch error so that one noisy failure cannot bloat the state.
const maxError = 400

// Listed is one repo of a watched org as the listing gives it: enough to seed it without
// reading the repo.
type Listed struct {
	ID        string
	SHA       string
	CreatedAt time.Time
}

// Stage is one backend's export workflow. Stages run in the order given, one at a time, so
// that every new model gets its CPU export before any runner is spent on the NPUs.
type Stage struct {
	Backend  string
	Workflow string
}

// Hub is what the watcher needs of the Hugging Face Hub: the newest repos of an org
// (every page, up to limit) and one model's metadata at a revision.
type Hub interface {
	ListOrg(ctx context.Context, org string, limit int) ([]Listed, error)
	Fetch(ctx context.Context, id, revision string) (*model.Source, error)
}

// Run is a workflow run as the busy check reads it: the title names the model, which is how
// a run already in flight is told from one that must be dispatched.
type Run struct {
	Title  string
	Status string
}

// Actions is what the watcher needs of GitHub Actions; an interface so that a pass can be
// driven against a local GitHub.
type Actions interface {
	// InFlight lists the workflow's runs that are queued, waiting or in progress.
	InFlight(ctx context.Context, workflow string) ([]Run, error)
	// Dispatch starts the workflow for one model at one revision.
	Dispatch(ctx context.Context, workflow, modelID, revision string) error
}

// Watcher holds one pass's settings and collaborators; Evaluate is passed in so that this
// package holds no backend's rules.
type Watcher struct {
	Config   *config.Config
	Hub      Hub
	Actions  Actions
	Stages   []Stage
	Evaluate func(src *model.Source) *family.Verdict
	// Cost, when set, is what exporting the model to the backend would cost (the plan's
	// figure), recorded with each pending backend and summed in the summary.
	Cost func(src *model.Source, backend string) *Cost
	// Catalog reads the output org's catalog (nil, nil when there is none yet), and Runtime
	// is the runtime the pipeline builds a backend's files for now: with both, a pass queues
	// the re-export of files built for another runtime (rebuilds).
	Catalog func(ctx context.Context) (*catalog.Catalog, error)
	Runtime func(backend string) catalog.Runtime
	// BackendName is exe-expo's name of the backend a config.json's "backend" names (it
	// says "mtk" for MediaTek's folders, as ExecuServe reads them); nil keeps the name.
	BackendName func(configName string) string
	// Now stamps the state; Sleep waits between dispatch attempts (tests give fakes).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Options are one run's command-line choices (the workflow's dispatch inputs).
type Options struct {
	Backfill []string
	DryRun   bool
	Requeue  bool
}

// Summary is what a pass did, for the step summary and the exit code.
type Summary struct {
	Seeded     int
	New        []string
	Backfilled []string
	Dispatched []string
	Failed     []string
	Stage      string
	DryRun     bool
	State      *State
	// Cost sums the dispatched runs' costs, where the watcher had a Cost.
	Cost Cost
	// Rebuilds are the folders queued again because they were built for another runtime;
	// Notes say what the pass could not check.
	Rebuilds []string
	Notes    []string
}

// Pass runs the watcher once over state (nil on the first run) and returns the updated
// state in the summary. It fails only when an org cannot be listed or a stage's runs
// cannot be read: dispatch failures are recorded and retried next run.
func (w *Watcher) Pass(ctx context.Context, state *State, opts Options) (*Summary, error) {
	sum := &Summary{DryRun: opts.DryRun}
	stamp := w.stamp()
	if state == nil {
		state = &State{Version: Version, SeededAt: stamp, Models: map[string]*Entry{}}
		if err := w.seed(ctx, state, sum, stamp); err != nil {
			return nil, err
		}
	} else if err := w.checkNew(ctx, state, sum, stamp); err != nil {
		return nil, err
	}
	sum.State = state
	for _, id := range opts.Backfill {
		e := state.Models[id]
		if e == nil {
			e = &Entry{FirstSeen: stamp}
			state.Models[id] = e
		}
		e.Backfill = stamp
		w.evaluate(ctx, e, id, "main", "")
		sum.Backfilled = append(sum.Backfilled, id)
	}
	if opts.Requeue {
		requeue(state, stamp)
	}
	w.rebuilds(ctx, state, sum, stamp)
	if err := w.stages(ctx, state, sum, !opts.DryRun); err != nil {
		return nil, err
	}
	for _, e := range state.Models {
		if e.Status == Pending && !hasPending(e) {
			e.Status = Dispatched
		}
	}
	return sum, nil
}

// seed records every listed model without checking or exporting it: the first run must not
// export an org's whole back catalogue.
func (w *Watcher) seed(ctx context.Context, state *State, sum *Summary, stamp string) error {
	for _, org := range w.orgs() {
		listed, err := w.Hub.ListOrg(ctx, org, w.Config.Watch.LimitPerOrg)
		if err != nil {
			return err
		}
		for _, l := range listed {
			state.Models[l.ID] = &Entry{Status: Seeded, SHA: l.SHA, CreatedAt: isoTime(l.CreatedAt), FirstSeen: stamp}
			sum.Seeded++
		}
	}
	return nil
}

// checkNew evaluates every listed model not seen before (and those waiting to retry).
func (w *Watcher) checkNew(ctx context.Context, state *State, sum *Summary, stamp string) error {
	for _, org := range w.orgs() {
		listed, err := w.Hub.ListOrg(ctx, org, w.Config.Watch.LimitPerOrg)
		if err != nil {
			return err
		}
		for _, l := range listed {
			e := state.Models[l.ID]
			if e != nil && e.Status != Retry {
				continue
			}
			if e == nil {
				e = &Entry{FirstSeen: stamp, CreatedAt: isoTime(l.CreatedAt)}
				state.Models[l.ID] = e
			}
			rev := l.SHA
			if rev == "" {
				rev = "main"
			}
			w.evaluate(ctx, e, l.ID, rev, org)
			sum.New = append(sum.New, l.ID)
		}
	}
	return nil
}

func (w *Watcher) orgs() []string {
	orgs := make([]string, 0, len(w.Config.Watch.OrgFamilies))
	for org := range w.Config.Watch.OrgFamilies {
		orgs = append(orgs, org)
	}
	sort.Strings(orgs)
	return orgs
}

// evaluate decides one model: name rules (and the org's own families) first, without a
// download; then its config at rev. org is "" for a backfill, which ignores the org rule.
func (w *Watcher) evaluate(ctx context.Context, e *Entry, id, rev, org string) {
	e.Backends = nil
	if reasons := w.nameReasons(id, org); len(reasons) > 0 {
		e.Status, e.Reasons = Skipped, reasons
		return
	}
	src, err := w.Hub.Fetch(ctx, id, rev)
	if err != nil {
		e.Attempts++
		if e.Attempts >= MaxAttempts {
			e.Status, e.Reasons = Skipped, []string{fmt.Sprintf("metadata unreadable after %d runs: %v", e.Attempts, err)}
		} else {
			e.Status, e.Reasons = Retry, []string{fmt.Sprintf("metadata fetch failed: %v", err)}
		}
		return
	}
	v := w.Evaluate(src)
	e.SHA, e.Family, e.Reasons = v.SHA, v.Family, slices.Clone(v.Reasons)
	if e.SHA == "" {
		e.SHA = rev
	}
	e.Backends = map[string]*BackendState{}
	e.Status = Skipped
	for _, bv := range v.Backends {
		e.Backends[bv.Backend] = w.backendState(v, bv)
		if e.Backends[bv.Backend].Status == Pending {
			e.Status = Pending
			if w.Cost != nil {
				e.Backends[bv.Backend].Cost = w.Cost(src, bv.Backend)
			}
		}
	}
}

func (w *Watcher) nameReasons(id, org string) []string {
	reasons := family.NameReasons(w.Config, id)
	if len(reasons) > 0 || org == "" {
		return reasons
	}
	own := w.Config.Watch.OrgFamilies[org]
	name := id[strings.LastIndex(id, "/")+1:]
	if fam := family.AppFamily(family.AppModelName(w.Config.RepoFor(name), "x.pte")); !slices.Contains(own, fam) {
		return []string{fmt.Sprintf("not one of %s's own families (%s)", org, strings.Join(own, ", "))}
	}
	return nil
}

// backendState is a backend's first record: pending when the model and the backend take it
// and a workflow exports it, else skipped with why.
func (w *Watcher) backendState(v *family.Verdict, bv family.BackendVerdict) *BackendState {
	switch {
	case !bv.OK:
		return &BackendState{Status: Skipped, Reason: bv.Reason}
	case !slices.ContainsFunc(w.Stages, func(s Stage) bool { return s.Backend == bv.Backend }):
		return &BackendState{Status: Skipped, Reason: "no export workflow yet"}
	case len(v.Reasons) > 0:
		return &BackendState{Status: Skipped, Reason: "the model is not eligible"}
	}
	return &BackendState{Status: Pending}
}

// requeue makes every dispatched backend pending again, for a re-export of everything.
func requeue(state *State, stamp string) {
	for _, e := range state.Models {
		for _, b := range e.Backends {
			if b.Status == Dispatched {
				b.Status, b.Requeued, b.At = Pending, stamp, ""
				e.Status = Pending
			}
		}
	}
}

func hasPending(e *Entry) bool {
	for _, b := range e.Backends {
		if b.Status == Pending {
			return true
		}
	}
	return false
}

func (w *Watcher) stamp() string {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	return isoTime(now())
}

func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
