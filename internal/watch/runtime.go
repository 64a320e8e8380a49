package watch

import (
	"context"
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/catalog"
)

// rebuilds queues the re-export of every backend whose published files the catalog lists
// for a runtime other than the pipeline's now (config/versions.env moved): the backend
// becomes pending, and the usual stages dispatch it within the per-run cap. A backend
// already dispatched for the pipeline's runtime is not queued again while its files are on
// their way. Without a catalog (none yet, or unreadable) nothing is queued and the summary
// says why.
func (w *Watcher) rebuilds(ctx context.Context, state *State, sum *Summary, stamp string) {
	if w.Catalog == nil || w.Runtime == nil {
		return
	}
	cat, err := w.Catalog(ctx)
	if err != nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("no rebuild check: the catalog could not be read: %v", err))
		return
	}
	if cat == nil {
		return
	}
	for _, st := range cat.Stale(w.Runtime) {
		w.rebuild(state, sum, stamp, st)
	}
}

func (w *Watcher) rebuild(state *State, sum *Summary, stamp string, st catalog.Stale) {
	source, folder, f, want := st.Source, st.Folder, st.Built, st.Want
	e := state.Models[source]
	if e == nil {
		rev := "main"
		if len(f.Windows) > 0 && f.Windows[0].SourceRevision != "" {
			rev = f.Windows[0].SourceRevision
		}
		e = &Entry{FirstSeen: stamp, SHA: rev, Backends: map[string]*BackendState{}}
		state.Models[source] = e
	}
	if e.Backends == nil {
		e.Backends = map[string]*BackendState{}
	}
	name := f.Backend
	if w.BackendName != nil {
		name = w.BackendName(name)
	}
	b := e.Backends[name]
	if b == nil {
		b = &BackendState{}
		e.Backends[name] = b
	}
	if b.Status == Pending || b.Runtime == want.String() {
		return // queued already, or dispatched for this runtime and on its way
	}
	b.Status, b.Requeued = Pending, stamp
	b.Reason = fmt.Sprintf("rebuild: %s was built for %s; the pipeline is at %s", folder, f.Runtime, want)
	e.Status = Pending
	sum.Rebuilds = append(sum.Rebuilds, fmt.Sprintf("%s %s: built for %s, now %s", source, folder, f.Runtime, want))
}
