package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/internal/watch/ghtest"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// watchRig points the watch command at a local Hub and a local GitHub.
func watchRig(t *testing.T) (*hubtest.Server, *ghtest.Server) {
	hubSrv := hubtest.New(t)
	gh := ghtest.New(t, "experimentalmachines", "exe-expo")
	t.Setenv("HF_ENDPOINT", hubSrv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("GITHUB_API_URL", gh.URL)
	t.Setenv("GITHUB_REPOSITORY", "experimentalmachines/exe-expo")
	t.Setenv("GITHUB_REF_NAME", "main")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_ACTIONS", "")
	return hubSrv, gh
}

func addSnapshotModel(t *testing.T, srv *hubtest.Server, id string) string {
	dir := filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B")
	files := map[string][]byte{}
	for _, name := range []string{"config.json", "generation_config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		files[name] = b
	}
	return srv.MustAddModel(t, id, files, hubtest.PipelineTag("text-generation"))
}

func TestWatchCommandLocalState(t *testing.T) {
	hubSrv, gh := watchRig(t)
	addSnapshotModel(t, hubSrv, "Qwen/Qwen3-0.6B")
	dir := t.TempDir()
	state := filepath.Join(dir, "seen.json")
	summary := filepath.Join(dir, "summary.md")

	code, out, errs := run(t, "watch", "--state", state)
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "First run: recorded 1 existing models")
	seeded, err := os.ReadFile(state)
	require.NoError(t, err)

	sha := addSnapshotModel(t, hubSrv, "Qwen/Qwen3-1.7B")
	code, out, errs = run(t, "watch", "--state", state, "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	assert.Regexp(t, `- Qwen/Qwen3-1.7B -> xnnpack \(5 export job\(s\), [0-9]+ runner minutes, \$[0-9.]+\)\n\nThis run would start 5 export job\(s\)`, out,
		"a dry run states the minutes and cost of the run it would start")
	after, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.Equal(t, string(seeded), string(after), "a dry run does not save the state")
	assert.Empty(t, gh.Dispatches())

	gh.FailDispatch(func(ghtest.Dispatch) (int, bool) { return 422, false })
	code, _, errs = run(t, "watch", "--state", state, "--summary", summary)
	assert.Equal(t, ExitFailed, code)
	assert.Len(t, gh.Dispatches(), 1, "GitHub refused the request itself: it is not asked again")
	assert.Contains(t, errs, "watch: 1 dispatch(es) failed; they stay pending and are retried next run")
	saved, err := watch.FileStore{Path: state}.Load(t.Context())
	require.NoError(t, err)
	assert.Contains(t, saved.Models["Qwen/Qwen3-1.7B"].Backends["xnnpack"].LastError, "GitHub answered 422", "the state is saved even when a dispatch failed")

	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| Qwen/Qwen3-1.7B | eligible |")
	assert.Contains(t, string(md), "Could not dispatch (still pending, retried next run):\n\n- Qwen/Qwen3-1.7B -> xnnpack: ")

	gh.FailDispatch(nil)
	code, _, errs = run(t, "watch", "--state", state, "--summary", summary)
	require.Equal(t, ExitOK, code, errs)
	md, err = os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "Checked 0 model(s); dispatched 1 export run(s) (stage: xnnpack).\n\nDispatched:\n\n- Qwen/Qwen3-1.7B -> xnnpack (", "the summary is appended")
	// the cost is plan's for the model and the stage's backend
	saved, err = watch.FileStore{Path: state}.Load(t.Context())
	require.NoError(t, err)
	c := saved.Models["Qwen/Qwen3-1.7B"].Backends["xnnpack"].Cost
	require.NotNil(t, c, "the state records the cost the plan gave")
	assert.Contains(t, string(md), "- Qwen/Qwen3-1.7B -> xnnpack ("+c.Line()+")\n\nThis run started "+c.Line()+", from the measured export times")
	last := gh.Dispatches()[len(gh.Dispatches())-1]
	assert.Equal(t, ghtest.Dispatch{Workflow: "export-xnnpack.yml", Ref: "main", Model: "Qwen/Qwen3-1.7B", Revision: sha, Status: 204}, last)
}

func TestWatchCommandStateBranch(t *testing.T) {
	hubSrv, gh := watchRig(t)
	addSnapshotModel(t, hubSrv, "Qwen/Qwen3-0.6B")
	code, _, errs := run(t, "watch", "--state", "seen.json", "--state-branch", "state")
	require.Equal(t, ExitOK, code, errs)
	body, ok := gh.File("state", "seen.json")
	require.True(t, ok, "the state is committed on the state branch")
	st, err := watch.ParseState("seen.json", []byte(body))
	require.NoError(t, err)
	assert.Equal(t, watch.Seeded, st.Models["Qwen/Qwen3-0.6B"].Status)

	gh.SetFile("state", "seen.json", `{"version": 7, "models": {}}`)
	code, _, errs = run(t, "watch", "--state", "seen.json", "--state-branch", "state")
	assert.Equal(t, ExitFailed, code)
	assert.Equal(t, "watch: seen.json on the state branch has state version 7, expected 1\n", errs)
}

func TestWatchCommandRefuses(t *testing.T) {
	watchRig(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "seen.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 2, "models": {}}`), 0o644))
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"watch"}, "watch: give --state FILE, the seen.json that remembers the models already checked\n"},
		{[]string{"watch", "--state", bad, "extra"}, "watch: takes no arguments, not \"extra\"; models to export now go in --backfill\n"},
		{[]string{"watch", "--state", bad, "--backfill", "Qwen/Qwen3-0.6B,nope"}, "watch: --backfill \"nope\" is not a Hugging Face model id (org/name)\n"},
		{[]string{"watch", "--state", bad, "--repo", "nope"}, "watch: the GitHub repository \"nope\" is not owner/name (" + watch.GitHubRepoRule + "); give --repo OWNER/NAME or set GITHUB_REPOSITORY\n"},
		{[]string{"watch", "--state", bad}, "watch: " + bad + " has state version 2, expected 1\n"},
	}
	for _, tc := range tests {
		code, _, errs := run(t, tc.args...)
		assert.Equal(t, ExitFailed, code, "%v", tc.args)
		assert.Equal(t, tc.err, errs, "%v", tc.args)
	}
}

// The watcher dispatches export-<backend>.yml for every exportable backend; the generator
// must have written each of them.
func TestWatchStagesAreGeneratedWorkflows(t *testing.T) {
	for _, b := range backend.Exportable() {
		assert.FileExists(t, filepath.Join("..", "..", ".github", "workflows", "export-"+b.Name+".yml"))
	}
}

// TestPlanCost: the watcher's cost of a backend is plan's own figure for it, and none
// where plan has no sizing.
func TestPlanCost(t *testing.T) {
	cfg, err := config.Load("")
	require.NoError(t, err)
	src, _, err := source.Open(t.Context(), "Qwen/Qwen3-0.6B", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "qnn")
	require.Len(t, p.Backends, 1)
	c := planCost(cfg, src, "qnn")
	require.NotNil(t, c)
	assert.Equal(t, watch.Cost{Jobs: p.Backends[0].Jobs, Minutes: p.Backends[0].Minutes, USD: p.Backends[0].USD}, *c)
	assert.Positive(t, c.Minutes)
	require.NotNil(t, p.Backends[0].Calibrate, "Qwen3-0.6B's recipe searches with SeqMSE: calibrated once per chip")
	assert.Equal(t, 2*(countBuilt(p.Backends[0].Rows)+1), c.Jobs, "one job per window built and chip (SM8750, SM8650), and each chip's calibration")
	assert.Nil(t, planCost(cfg, src, "enn"), "a backend plan does not size has no cost")
}

func countBuilt(rows []plan.Row) int {
	n := 0
	for _, r := range rows {
		if r.Skip == "" {
			n++
		}
	}
	return n
}

// TestRuntimeFor: the runtime the watcher compares the catalog with is what publish records
// for each backend's folder (config.json: runtime_version, qnn_sdk_version, neuropilot_sdk).
func TestRuntimeFor(t *testing.T) {
	cfg, err := config.Load("")
	require.NoError(t, err)
	et := cfg.Versions.ExecuTorch
	assert.Equal(t, catalog.Runtime{ExecuTorch: et}, runtimeFor(cfg, "xnnpack"))
	assert.Equal(t, catalog.Runtime{ExecuTorch: et}, runtimeFor(cfg, "vulkan"))
	assert.Equal(t, catalog.Runtime{ExecuTorch: et, QAIRT: cfg.Versions.QAIRT}, runtimeFor(cfg, "qnn"))
	assert.Equal(t, catalog.Runtime{ExecuTorch: et, NeuroPilotSDK: cfg.Versions.NeuroPilotSDKBuild}, runtimeFor(cfg, "mediatek"))
}
