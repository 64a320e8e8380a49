package watch_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/watch"
)

func TestValidOwner(t *testing.T) {
	tests := []struct {
		owner string
		want  bool
		why   string
	}{
		{"experimentalmachines", true, "an organization"},
		{"a", true, "one character"},
		{"mona-lisa-1", true, "single hyphens"},
		{strings.Repeat("a", 39), true, "39 characters"},
		{"", false, "empty"},
		{"..", false, "a path climbing out"},
		{"-a", false, "a leading hyphen"},
		{"a-", false, "a trailing hyphen"},
		{"a--b", false, "a double hyphen"},
		{"a_b", false, "an underscore"},
		{"a.b", false, "a dot"},
		{"a?b", false, "'?' would start a query"},
		{"a%2fb", false, "'%' would be unescaped into a slash"},
		{"a/b", false, "a slash"},
		{"ü", false, "non-ASCII"},
		{strings.Repeat("a", 40), false, "40 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			assert.Equal(t, tc.want, watch.ValidOwner(tc.owner), "%q", tc.owner)
		})
	}
}

func TestValidRepoName(t *testing.T) {
	tests := []struct {
		name string
		want bool
		why  string
	}{
		{"exe-expo", true, "a repository"},
		{"a.b_c-d", true, "every allowed character"},
		{".github", true, "a leading dot"},
		{"a--b", true, "a double hyphen"},
		{strings.Repeat("a", 100), true, "100 characters"},
		{"", false, "empty"},
		{".", false, "'.'"},
		{"..", false, "'..'"},
		{"a?b", false, "'?' would start a query"},
		{"a%2fb", false, "'%' would be unescaped into a slash"},
		{"a/b", false, "a slash"},
		{"a b", false, "a space"},
		{"ü", false, "non-ASCII"},
		{"a.git", false, "a .git suffix GitHub strips"},
		{"a.wiki", false, "a .wiki suffix GitHub refuses"},
		{strings.Repeat("a", 101), false, "101 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			assert.Equal(t, tc.want, watch.ValidRepoName(tc.name), "%q", tc.name)
		})
	}
}

func TestParseRepo(t *testing.T) {
	owner, name, err := watch.ParseRepo("--repo", "experimentalmachines/exe-expo")
	require.NoError(t, err)
	assert.Equal(t, []string{"experimentalmachines", "exe-expo"}, []string{owner, name})
	for _, bad := range []string{"", "exe-expo", "../X", "a/b/c", "a/b?c", "a%2fb/c", "-a/b", "a/b.git", "a/", "/b"} {
		_, _, err := watch.ParseRepo("--repo", bad)
		require.ErrorIs(t, err, watch.ErrInvalidName, "%q", bad)
		assert.Contains(t, err.Error(), `--repo "`+bad+`" is not owner/name (`)
	}
}

func TestCheckBranchAndStatePath(t *testing.T) {
	require.NoError(t, watch.CheckBranch("--state-branch", "watch-state"))
	require.NoError(t, watch.CheckStatePath("--state", "state/seen.json"))
	for _, bad := range []string{"", "a..b", "a b", "a~1", "a:b", "a?b", "-a", "a.lock", "a/", "a//b", "a@{1}"} {
		err := watch.CheckBranch("--state-branch", bad)
		require.ErrorIs(t, err, watch.ErrInvalidName, "%q", bad)
		assert.Contains(t, err.Error(), `--state-branch "`+bad+`" is not a branch name`)
	}
	for _, bad := range []string{"", "/seen.json", "../seen.json", "a//seen.json", ".git/seen.json", "a\nb"} {
		err := watch.CheckStatePath("--state", bad)
		require.ErrorIs(t, err, watch.ErrInvalidName, "%q", bad)
		assert.Contains(t, err.Error(), `is not a file path in the repository`)
	}
}

// noGitHub is a GitHub API that fails the test on any request.
func noGitHub(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the client sent %s %s", r.Method, r.URL.RequestURI())
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestGitHubRefusesBadNamesBeforeSending: the repository, the ref, a workflow file, the
// state branch and the state path are checked before any request.
func TestGitHubRefusesBadNamesBeforeSending(t *testing.T) {
	ctx := context.Background()
	api := noGitHub(t)
	_, err := watch.NewGitHub(api, "../X", "token", "main")
	require.ErrorIs(t, err, watch.ErrInvalidName)
	assert.Contains(t, err.Error(), `the GitHub repository "../X" is not owner/name`)
	_, err = watch.NewGitHub(api, "o/r", "token", "a..b")
	require.ErrorIs(t, err, watch.ErrInvalidName)
	assert.Contains(t, err.Error(), `the ref "a..b" is not a branch name`)

	good, err := watch.NewGitHub(api, "o/r", "token", "main")
	require.NoError(t, err)
	handMade := *good
	handMade.Owner = ".."
	badRef := *good
	badRef.Ref = "a..b"
	tests := []struct {
		name, want string
		call       func() error
	}{
		{"runs of a hand-made repo", `the GitHub repository "../r"`, func() error { _, err := handMade.InFlight(ctx, "export-xnnpack.yml"); return err }},
		{"dispatch to a hand-made repo", `the GitHub repository "../r"`, func() error { return handMade.Dispatch(ctx, "export-xnnpack.yml", "a/b", "main") }},
		{"dispatch on a hand-made ref", `the ref "a..b"`, func() error { return badRef.Dispatch(ctx, "export-xnnpack.yml", "a/b", "main") }},
		{"runs of workflow ../x.yml", `workflow "../x.yml"`, func() error { _, err := good.InFlight(ctx, "../x.yml"); return err }},
		{"runs of workflow a/b.yml", `workflow "a/b.yml"`, func() error { _, err := good.InFlight(ctx, "a/b.yml"); return err }},
		{"dispatch of workflow x?y", `workflow "x?y"`, func() error { return good.Dispatch(ctx, "x?y", "a/b", "main") }},
		{"load the state from branch a..b", `the state branch "a..b"`, func() error {
			_, err := (&watch.BranchStore{GitHub: good, Branch: "a..b", Path: "seen.json"}).Load(ctx)
			return err
		}},
		{"load the state from ../seen.json", `the state file "../seen.json"`, func() error {
			_, err := (&watch.BranchStore{GitHub: good, Branch: "state", Path: "../seen.json"}).Load(ctx)
			return err
		}},
		{"save the state to branch a b", `the state branch "a b"`, func() error {
			return (&watch.BranchStore{GitHub: good, Branch: "a b", Path: "seen.json"}).Save(ctx, &watch.State{Version: 1})
		}},
		{"save the state in a hand-made repo", `the GitHub repository "../r"`, func() error {
			return (&watch.BranchStore{GitHub: &handMade, Branch: "state", Path: "seen.json"}).Save(ctx, &watch.State{Version: 1})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, watch.ErrInvalidName)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
