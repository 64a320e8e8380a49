package ghtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// send makes one request without following redirects and returns status and body.
func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestRefusesBadNames sends, as a client with a bug would, the names GitHub refuses: a bad
// ref, tree path or state path is a 400 with GitHub's JSON error, another repository or
// workflow a 404, never an answer about another ref or file.
func TestRefusesBadNames(t *testing.T) {
	s := New(t, "o", "r")
	s.SetFile("state", "seen.json", "{}")
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"ref heads/a..b", "GET", "/repos/o/r/git/ref/heads/a..b", "", 400, `\"heads/a..b\" is not a valid ref name`},
		{"ref heads/a~1", "GET", "/repos/o/r/git/ref/heads/a~1", "", 400, `\"heads/a~1\" is not a valid ref name`},
		{"ref climbing out", "GET", "/repos/o/r/git/ref/heads/../../x", "", 400, "Invalid path"},
		{"ref with an escaped dot-dot", "GET", "/repos/o/r/git/ref/heads/%2e%2e/state", "", 400, "Invalid path"},
		{"ref with an empty part", "GET", "/repos/o/r/git/ref/heads//state", "", 400, "Invalid path"},
		{"create ref a b", "POST", "/repos/o/r/git/refs", `{"ref":"refs/heads/a b","sha":"x"}`, 400, `\"refs/heads/a b\" is not a valid ref name`},
		{"update ref x.lock", "PATCH", "/repos/o/r/git/refs/heads/x.lock", `{"sha":"x"}`, 400, `\"heads/x.lock\" is not a valid ref name`},
		{"contents of .git/config", "GET", "/repos/o/r/contents/.git/config?ref=state", "", 400, "malformed path component"},
		{"contents at ref a..b", "GET", "/repos/o/r/contents/seen.json?ref=a..b", "", 400, `\"a..b\" is not a valid ref name`},
		{"tree with ../seen.json", "POST", "/repos/o/r/git/trees", `{"tree":[{"path":"../seen.json","mode":"100644","type":"blob","content":"{}"}]}`, 400, "malformed path component"},
		{"dispatch on ref a..b", "POST", "/repos/o/r/actions/workflows/export-xnnpack.yml/dispatches", `{"ref":"a..b","inputs":{}}`, 400, `\"a..b\" is not a valid ref name`},
		{"dispatch of workflow a%2Fb.yml", "POST", "/repos/o/r/actions/workflows/a%2Fb.yml/dispatches", `{"ref":"main","inputs":{}}`, 404, "Not Found"},
		{"runs of another owner", "GET", "/repos/x/r/actions/workflows/export-xnnpack.yml/runs", "", 404, ""},
		{"runs of ../r", "GET", "/repos/../r/actions/workflows/export-xnnpack.yml/runs", "", 400, "Invalid path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, body := send(t, tc.method, s.URL+tc.path, tc.body)
			require.Equal(t, tc.status, st, body)
			if tc.want == "" {
				return
			}
			var e struct{ Message string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Contains(t, e.Message, strings.ReplaceAll(tc.want, `\"`, `"`))
		})
	}
	assert.Empty(t, s.Dispatches(), "a refused dispatch was recorded")
	body, ok := s.File("state", "seen.json")
	assert.True(t, ok)
	assert.Equal(t, "{}", body)
}

// TestAcceptsGoodNames: the names the watcher sends reach what they name.
func TestAcceptsGoodNames(t *testing.T) {
	s := New(t, "o", "r")
	s.SetFile("watch-state", "state/seen.json", "{}")
	for _, p := range []string{"/repos/o/r/git/ref/heads/watch-state", "/repos/o/r/contents/state/seen.json?ref=watch-state"} {
		st, body := send(t, "GET", s.URL+p, "")
		assert.Equal(t, 200, st, "%s: %s", p, body)
	}
}
