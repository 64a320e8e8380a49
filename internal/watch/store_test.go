package watch_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/watch"
)

func TestParseStateRefuses(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown version", `{"version": 2, "models": {}}`, "seen.json has state version 2, expected 1"},
		{"version as text", `{"version": "1", "models": {}}`, `seen.json has state version "1", expected 1`},
		{"no version", `{"models": {}}`, "seen.json has no state version; expected 1"},
		{"not JSON", `models: {}`, "seen.json is not a watcher state file (JSON): invalid character 'm' looking for beginning of value"},
		{"unknown key", `{"version": 1, "models": {"a/b": {"status": "seeded", "colour": "red"}}}`, `seen.json does not hold a version 1 watcher state: json: unknown field "colour"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := watch.ParseState("seen.json", []byte(tc.body))
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// sample is a state with every field set.
func sample() *watch.State {
	return &watch.State{Version: 1, SeededAt: "2026-12-01T10:00:00Z", Models: map[string]*watch.Entry{
		"Qwen/Qwen3-0.6B": {Status: watch.Pending, SHA: "abc", CreatedAt: "2026-11-30T00:00:00Z", FirstSeen: "2026-12-01T10:00:00Z",
			Family: "qwen3", Attempts: 1, Backfill: "2026-12-01T11:00:00Z", Reasons: []string{"r"},
			Backends: map[string]*watch.BackendState{"xnnpack": {Status: watch.Dispatched, At: "t", LastError: "e", Requeued: "q"}, "enn": {Status: watch.Skipped, Reason: "why"}}},
		"Qwen/Qwen3-8B": {Status: watch.Seeded, SHA: "def"},
	}}
}

func TestStateFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seen.json")
	store := watch.FileStore{Path: path}
	got, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Nil(t, got, "no file is the first run")

	require.NoError(t, store.Save(context.Background(), sample()))
	got, err = store.Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(sample(), got))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{
  "models": {
    "Qwen/Qwen3-0.6B": {
      "attempts": 1,
      "backends": {
        "enn": {
          "reason": "why",
          "status": "skipped"
        },
        "xnnpack": {
          "at": "t",
          "last_error": "e",
          "requeued": "q",
          "status": "dispatched"
        }
      },
      "backfill": "2026-12-01T11:00:00Z",
      "created_at": "2026-11-30T00:00:00Z",
      "family": "qwen3",
      "first_seen": "2026-12-01T10:00:00Z",
      "reasons": [
        "r"
      ],
      "sha": "abc",
      "status": "pending"
    },
    "Qwen/Qwen3-8B": {
      "sha": "def",
      "status": "seeded"
    }
  },
  "seeded_at": "2026-12-01T10:00:00Z",
  "version": 1
}
`, string(data), "sorted keys, two-space indent, trailing newline")
}

func TestStateFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	_, err := watch.FileStore{Path: dir}.Load(context.Background())
	require.Error(t, err)
	assert.Equal(t, "cannot read the state file "+dir+": is a directory", err.Error())

	err = watch.FileStore{Path: filepath.Join(dir, "no", "seen.json")}.Save(context.Background(), sample())
	require.Error(t, err)
	assert.Equal(t, "cannot write the state file "+filepath.Join(dir, "no", "seen.json.tmp")+": no such file or directory", err.Error())
}

func TestStateBranchRoundTrip(t *testing.T) {
	r := newRig(t)
	store := r.branch()
	got, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Nil(t, got, "no state branch is the first run")

	require.NoError(t, store.Save(context.Background(), sample()))
	body, ok := r.gh.File("state", "seen.json")
	require.True(t, ok)
	assert.Equal(t, string(sample().Marshal()), body)
	require.NoError(t, store.Save(context.Background(), sample()), "a second save of the same run fast-forwards")
	assert.Equal(t, 2, r.gh.Commits("state"))

	got, err = r.branch().Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(sample(), got))
}

func TestStateBranchOfAnUnknownVersionIsRefused(t *testing.T) {
	r := newRig(t)
	r.gh.SetFile("state", "seen.json", `{"version": 3, "models": {}}`)
	_, err := r.branch().Load(context.Background())
	require.Error(t, err)
	assert.Equal(t, "seen.json on the state branch has state version 3, expected 1", err.Error())
}

func TestConcurrentWatchersDispatchOnce(t *testing.T) {
	r := newRig(t)
	first := r.branch()
	require.NoError(t, first.Save(context.Background(), r.pass(nil, watch.Options{}).State))
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")

	a, b := r.branch(), r.branch()
	stateA, err := a.Load(context.Background())
	require.NoError(t, err)
	stateB, err := b.Load(context.Background())
	require.NoError(t, err)

	sumA := r.pass(stateA, watch.Options{})
	sumB := r.pass(stateB, watch.Options{})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sumA.Dispatched)
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sumB.Dispatched, "B finds A's run in flight and counts it")
	assert.Len(t, r.gh.Dispatches(), 1, "nothing is dispatched twice")

	require.NoError(t, a.Save(context.Background(), sumA.State))
	err = b.Save(context.Background(), sumB.State)
	require.ErrorIs(t, err, watch.ErrConflict)
	assert.Equal(t, "could not save the state on the state branch: the state changed since this run read it: another watcher run saved first", err.Error())
	body, _ := r.gh.File("state", "seen.json")
	assert.Equal(t, string(sumA.State.Marshal()), body, "the first save wins")
}

func TestConcurrentFirstRunsCreateTheBranchOnce(t *testing.T) {
	r := newRig(t)
	a, b := r.branch(), r.branch()
	for _, s := range []*watch.BranchStore{a, b} {
		got, err := s.Load(context.Background())
		require.NoError(t, err)
		require.Nil(t, got)
	}
	require.NoError(t, a.Save(context.Background(), sample()))
	require.ErrorIs(t, b.Save(context.Background(), sample()), watch.ErrConflict)
	assert.Equal(t, 1, r.gh.Commits("state"))
}

func TestFailedSaveLosesNoDispatch(t *testing.T) {
	r := newRig(t)
	require.NoError(t, r.branch().Save(context.Background(), r.pass(nil, watch.Options{}).State))
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")

	store := r.branch()
	state, err := store.Load(context.Background())
	require.NoError(t, err)
	r.gh.FailSave(500)
	sum := r.pass(state, watch.Options{})
	require.Len(t, sum.Dispatched, 1)
	err = store.Save(context.Background(), sum.State)
	require.Error(t, err)
	assert.Equal(t, "could not save the state on the state branch (tree): GitHub answered 500: Internal Server Error", err.Error())

	r.gh.FailSave(0)
	next := r.branch()
	state, err = next.Load(context.Background())
	require.NoError(t, err)
	require.NotContains(t, state.Models, "Qwen/Qwen3-0.6B", "the failed save kept nothing")
	sum = r.pass(state, watch.Options{})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B -> xnnpack"}, sum.Dispatched, "the run in flight counts as dispatched")
	assert.Len(t, r.gh.Dispatches(), 1, "and is not dispatched again")
	require.NoError(t, next.Save(context.Background(), sum.State))
}
