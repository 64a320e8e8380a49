package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// refuseRequests points the Hub (HF_ENDPOINT, with a token) and GitHub (GITHUB_API_URL) at
// a server that fails the test on any request.
func refuseRequests(t *testing.T) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request %s %s sent for a name that should have been refused", r.Method, r.URL.RequestURI())
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GH_TOKEN", "gh_test")
	t.Setenv("GITHUB_REPOSITORY", "experimentalmachines/exe-expo")
	t.Setenv("GITHUB_REF_NAME", "main")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_OUTPUT", "")
	t.Setenv("GITHUB_ACTIONS", "")
}

// TestNamesRefusedBeforeAnyRequest: a repo id, branch or path from the command line that
// the Hub or GitHub would refuse ends the command with exit 2 and one sentence naming the
// flag and the value, before any request.
func TestNamesRefusedBeforeAnyRequest(t *testing.T) {
	idRule := " is not a Hub repo id (" + model.IDRule + ")\n"
	longName := "Qwen/" + strings.Repeat("a", 90) // a valid source id whose output repo is 101 characters
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"publish --repo ../X", func(t *testing.T) []string { return []string{"publish", exportedWindow(t, true), "--repo", "../X"} },
			`publish: --repo "../X"` + idRule},
		{"publish --repo a/b?c", func(t *testing.T) []string { return []string{"publish", exportedWindow(t, true), "--repo", "a/b?c"} },
			`publish: --repo "a/b?c"` + idRule},
		{"publish --repo a%2fb/c", func(t *testing.T) []string {
			return []string{"publish", exportedWindow(t, true), "--repo", "a%2fb/c", "--dry-run"}
		}, `publish: --repo "a%2fb/c"` + idRule},
		{"publish --release in ../X", func(t *testing.T) []string {
			t.Setenv("GITHUB_REPOSITORY", "../X")
			return []string{"publish", exportedWindow(t, true), "--release"}
		}, `publish: --release: a GitHub release needs GITHUB_REPOSITORY set to the repository to release in: GITHUB_REPOSITORY "../X" is not owner/name (`},
		{"watch --repo ../X", func(t *testing.T) []string { return []string{"watch", "--state", stateFile(t), "--repo", "../X"} },
			`watch: the GitHub repository "../X" is not owner/name (` + watch.GitHubRepoRule + "); give --repo OWNER/NAME or set GITHUB_REPOSITORY\n"},
		{"watch from GITHUB_REPOSITORY o/r?x", func(t *testing.T) []string {
			t.Setenv("GITHUB_REPOSITORY", "o/r?x")
			return []string{"watch", "--state", stateFile(t)}
		}, `watch: the GitHub repository "o/r?x" is not owner/name (`},
		{"watch --ref a..b", func(t *testing.T) []string { return []string{"watch", "--state", stateFile(t), "--ref", "a..b"} },
			`watch: --ref "a..b" is not a branch name (` + hub.RefRule + ")\n"},
		{"watch --state-branch a b", func(t *testing.T) []string {
			return []string{"watch", "--state", "seen.json", "--state-branch", "a b"}
		}, `watch: --state-branch "a b" is not a branch name (`},
		{"watch --state ../seen.json on a branch", func(t *testing.T) []string {
			return []string{"watch", "--state", "../seen.json", "--state-branch", "state"}
		}, `watch: --state "../seen.json" is not a file path in the repository (` + hub.PathRule + ")\n"},
		{"audit ../X", func(t *testing.T) []string { return []string{"audit", "../X", "--work", t.TempDir()} },
			`audit: SOURCE_MODEL "../X"` + idRule},
		{"audit of a name too long for its output repo", func(t *testing.T) []string {
			return []string{"audit", longName, "--work", t.TempDir()}
		}, `audit: the output repo "experimentalmachines/` + strings.Repeat("a", 90) + `-ExecuTorch"` + idRule},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			refuseRequests(t)
			code, out, errs := run(t, tc.args(t)...)
			assert.Equal(t, ExitFailed, code, errs)
			assert.Empty(t, out)
			if strings.HasSuffix(tc.want, "\n") {
				assert.Equal(t, tc.want, errs)
			} else {
				assert.Contains(t, errs, tc.want)
			}
		})
	}
}

// stateFile is a local state file path in a fresh folder.
func stateFile(t *testing.T) string { return filepath.Join(t.TempDir(), "seen.json") }
