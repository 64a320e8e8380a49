package watch_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/internal/watch/ghtest"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// rig is one watcher against a local Hub and a local GitHub, with a clock the test moves.
type rig struct {
	t      *testing.T
	hub    *hubtest.Server
	gh     *ghtest.Server
	cfg    *config.Config
	now    time.Time
	sleeps []time.Duration
	// fetched lists the models the watcher read, in order
	fetched []string
	// lists counts the pages of model listings the Hub client asked for
	lists *int
	w     *watch.Watcher
}

func newRig(t *testing.T) *rig {
	t.Helper()
	cfg, err := config.Load("")
	require.NoError(t, err)
	// one org keeps the listings easy to follow; the org rule is tested with HuggingFaceTB
	cfg.Watch.OrgFamilies = map[string][]string{"Qwen": {"qwen3", "qwen25"}, "HuggingFaceTB": {"smollm2", "smollm3"}}
	r := &rig{t: t, hub: hubtest.New(t), gh: ghtest.New(t, "experimentalmachines", "exe-expo"), cfg: cfg,
		now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	gh, err := watch.NewGitHub(r.gh.URL, "experimentalmachines/exe-expo", "token", "main")
	require.NoError(t, err)
	transport := &listCounter{next: http.DefaultTransport}
	r.lists = &transport.n
	client := hub.New(hub.Options{Endpoint: r.hub.URL, NoEnvToken: true, RetryMax: -1, HTTPClient: &http.Client{Transport: transport}})
	var stages []watch.Stage
	for _, b := range backend.Exportable() {
		stages = append(stages, watch.Stage{Backend: b.Name, Workflow: "export-" + b.Name + ".yml"})
	}
	r.w = &watch.Watcher{
		Config:   cfg,
		Hub:      recordingHub{Hub: watch.HubSource{Client: client, Source: source.Hub{Client: client}}, fetched: &r.fetched},
		Actions:  gh,
		Stages:   stages,
		Evaluate: func(src *model.Source) *family.Verdict { return backend.Evaluate(cfg, src) },
		Now:      func() time.Time { return r.now },
		Sleep: func(_ context.Context, d time.Duration) error {
			r.sleeps = append(r.sleeps, d)
			return nil
		},
	}
	return r
}

// snapshotFiles are a real model's config files from the embedded snapshot.
func snapshotFiles(t *testing.T, id string) map[string][]byte {
	t.Helper()
	dir := filepath.Join("..", "snapshot", "data", strings.ReplaceAll(id, "/", "__"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = b
	}
	return files
}

// add puts a model on the Hub with the config of a snapshot model; it returns its sha.
func (r *rig) add(id, configOf string) string {
	files := map[string][]byte{}
	if configOf != "" {
		files = snapshotFiles(r.t, configOf)
	}
	return r.hub.MustAddModel(r.t, id, files, hubtest.PipelineTag("text-generation"))
}

// pass runs the watcher once, one hour after the previous pass.
func (r *rig) pass(state *watch.State, opts watch.Options) *watch.Summary {
	r.t.Helper()
	r.now = r.now.Add(time.Hour)
	sum, err := r.w.Pass(context.Background(), state, opts)
	require.NoError(r.t, err)
	return sum
}

// listCounter counts model-listing requests as the client sends them.
type listCounter struct {
	next http.RoundTripper
	n    int
}

func (c *listCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/api/models" {
		c.n++
	}
	return c.next.RoundTrip(req)
}

// recordingHub notes every model the watcher reads, so that a test can tell what was read
// without depending on when the Hub's request log is written.
type recordingHub struct {
	watch.Hub
	fetched *[]string
}

func (h recordingHub) Fetch(ctx context.Context, id, revision string) (*model.Source, error) {
	*h.fetched = append(*h.fetched, id)
	return h.Hub.Fetch(ctx, id, revision)
}

// dispatched lists "<workflow> <model>@<revision>" for each dispatch GitHub accepted.
func (r *rig) dispatched() []string {
	var out []string
	for _, d := range r.gh.Dispatches() {
		if d.Status == 204 {
			out = append(out, d.Workflow+" "+d.Model+"@"+d.Revision)
		}
	}
	return out
}

// branch is a fresh state store on the local GitHub's state branch.
func (r *rig) branch() *watch.BranchStore {
	return &watch.BranchStore{GitHub: r.w.Actions.(*watch.GitHub), Branch: "state", Path: "seen.json"}
}
