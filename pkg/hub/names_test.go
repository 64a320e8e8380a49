package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

func TestValidRef(t *testing.T) {
	tests := []struct {
		ref  string
		want bool
		why  string
	}{
		{"main", true, "a branch"},
		{"refs/pr/1", true, "a Hub pull request"},
		{"refs/convert/parquet", true, "a Hub conversion branch"},
		{"v1.0", true, "a tag"},
		{"0123456789abcdef0123456789abcdef01234567", true, "a commit sha"},
		{"HEAD", true, "HEAD"},
		{"a%2fb", true, "'%' is allowed in git and escaped in URLs"},
		{"a/b--c", true, "'--' is allowed in git"},
		{"ünïcode", true, "git takes non-ASCII"},
		{strings.Repeat("a", 255), true, "a part of 255 bytes"},
		{"", false, "empty"},
		{"@", false, "'@' alone"},
		{"a..b", false, "'..'"},
		{"../X", false, "a path climbing out"},
		{"a b", false, "a space"},
		{"a\tb", false, "a control character"},
		{"a\x7fb", false, "DEL"},
		{"a~1", false, "'~'"},
		{"a^", false, "'^'"},
		{"a:b", false, "':'"},
		{"a?b", false, "'?' would start a query"},
		{"a*", false, "'*'"},
		{"a[b", false, "'['"},
		{`a\b`, false, "a backslash"},
		{"a.lock", false, "a part ending in .lock"},
		{"a.lock/b", false, "an inner part ending in .lock"},
		{"a/", false, "a trailing '/'"},
		{"/a", false, "a leading '/'"},
		{"a//b", false, "'//'"},
		{"a.", false, "a trailing '.'"},
		{".a", false, "a part starting with '.'"},
		{"a/.b", false, "an inner part starting with '.'"},
		{"a@{1}", false, "'@{'"},
		{"-a", false, "a leading '-'"},
		{"a\xffb", false, "invalid UTF-8"},
		{strings.Repeat("a", 256), false, "a part of 256 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			assert.Equal(t, tc.want, hub.ValidRef(tc.ref), "%q", tc.ref)
		})
	}
}

func TestValidPath(t *testing.T) {
	tests := []struct {
		path string
		want bool
		why  string
	}{
		{"config.json", true, "a root file"},
		{"xnnpack/model-4k.pte", true, "a file in a folder"},
		{"a b/c?d#e%2f.json", true, "escaped in URLs, allowed in git"},
		{".gitattributes", true, "a dot file"},
		{"ünïcode.txt", true, "non-ASCII"},
		{"", false, "empty"},
		{"/etc/passwd", false, "absolute"},
		{"../x", false, "climbing out"},
		{"a/../../x", false, "climbing out from inside"},
		{"./x", false, "a '.' part"},
		{"a//b", false, "an empty part"},
		{"a/", false, "a trailing '/'"},
		{".git/config", false, "under .git"},
		{"a/.git/b", false, "under an inner .git"},
		{"a\nb", false, "a newline"},
		{"a\x00b", false, "a NUL"},
		{"a\xffb", false, "invalid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			assert.Equal(t, tc.want, hub.ValidPath(tc.path), "%q", tc.path)
		})
	}
}

// noRequests is a Hub that fails the test on any request: a client that checks its names
// first never reaches it.
func noRequests(t *testing.T) *hub.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the client sent %s %s", r.Method, r.URL.RequestURI())
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return hub.New(hub.Options{Endpoint: srv.URL, Token: testToken, RetryMax: 0})
}

// TestClientRefusesBadNamesBeforeSending calls every method that takes a repo id, revision
// or path with a bad one: each fails with ErrInvalidName, naming the field and the value,
// and sends nothing.
func TestClientRefusesBadNamesBeforeSending(t *testing.T) {
	ctx := context.Background()
	dst := filepath.Join(t.TempDir(), "f")
	commit := func(c *hub.Client, req hub.CommitRequest) error {
		req.Summary = "s"
		if req.Repo == "" {
			req.Repo = "org/m"
		}
		if req.Add == nil {
			req.Add = []hub.CommitFile{{PathInRepo: "a.txt", Content: []byte("a")}}
		}
		_, err := c.Commit(ctx, req)
		return err
	}
	onHead := func(c *hub.Client, repo, branch string) error {
		_, err := c.CommitOnHead(ctx, repo, branch, 1, nil, func(context.Context, string) (hub.CommitRequest, error) {
			t.Error("the commit was built")
			return hub.CommitRequest{}, nil
		})
		return err
	}
	tests := []struct {
		name, want string
		call       func(c *hub.Client) error
	}{
		{"model info of ../X", `hub: model info: repo "../X" is not a Hub repo id (`, func(c *hub.Client) error {
			_, err := c.ModelInfo(ctx, "../X", hub.InfoOptions{})
			return err
		}},
		{"model info of a/b?c", `repo "a/b?c"`, func(c *hub.Client) error { _, err := c.ModelInfo(ctx, "a/b?c", hub.InfoOptions{}); return err }},
		{"model info at a..b", `hub: model info: revision "a..b" is not a git branch`, func(c *hub.Client) error {
			_, err := c.ModelInfo(ctx, "org/m", hub.InfoOptions{Revision: "a..b"})
			return err
		}},
		{"head of a/b/c", `repo "a/b/c"`, func(c *hub.Client) error { _, err := c.HeadSHA(ctx, "a/b/c", "main"); return err }},
		{"head of branch a?b", `revision "a?b"`, func(c *hub.Client) error { _, err := c.HeadSHA(ctx, "org/m", "a?b"); return err }},
		{"auth check of a%2fb/c", `hub: auth check: repo "a%2fb/c"`, func(c *hub.Client) error { return c.AuthCheck(ctx, "a%2fb/c") }},
		{"create repo -a/b", `hub: create repo: repo "-a/b"`, func(c *hub.Client) error { _, err := c.CreateRepo(ctx, "-a/b", hub.RepoOptions{}); return err }},
		{"create repo a/b--c", `repo "a/b--c"`, func(c *hub.Client) error { _, err := c.CreateRepo(ctx, "a/b--c", hub.RepoOptions{}); return err }},
		{"file meta of a/b.", `hub: file metadata: repo "a/b."`, func(c *hub.Client) error { _, err := c.FileMeta(ctx, "a/b.", "main", "f"); return err }},
		{"file meta at a:b", `revision "a:b"`, func(c *hub.Client) error { _, err := c.FileMeta(ctx, "org/m", "a:b", "f"); return err }},
		{"file meta of ../x", `hub: file metadata: path "../x" is not a file path`, func(c *hub.Client) error {
			_, err := c.FileMeta(ctx, "org/m", "main", "../x")
			return err
		}},
		{"file exists of ../x", `path "../x"`, func(c *hub.Client) error { _, err := c.FileExists(ctx, "org/m", "main", "../x"); return err }},
		{"read range of a//b", `hub: read range: path "a//b"`, func(c *hub.Client) error { _, err := c.ReadRange(ctx, "org/m", "main", "a//b", 0, 8); return err }},
		{"read file of .git/config", `hub: read file: path ".git/config"`, func(c *hub.Client) error {
			_, err := c.ReadFile(ctx, "org/m", "main", ".git/config")
			return err
		}},
		{"files of ü/m", `repo "ü/m"`, func(c *hub.Client) error { _, err := c.Files("ü/m", "").ReadFile(ctx, "config.json"); return err }},
		{"download at refs/../x", `hub: download: revision "refs/../x"`, func(c *hub.Client) error {
			_, err := c.Download(ctx, "org/m", "refs/../x", "f", dst)
			return err
		}},
		{"commit to ../X", `hub: commit: repo "../X"`, func(c *hub.Client) error { return commit(c, hub.CommitRequest{Repo: "../X"}) }},
		{"commit to branch a b", `hub: commit: revision "a b"`, func(c *hub.Client) error { return commit(c, hub.CommitRequest{Branch: "a b"}) }},
		{"commit adding ../x", `hub: commit file 0: path "../x"`, func(c *hub.Client) error {
			return commit(c, hub.CommitRequest{Add: []hub.CommitFile{{PathInRepo: "../x", Content: []byte("x")}}})
		}},
		{"commit deleting a/../", `hub: commit deletion: path "a/.."`, func(c *hub.Client) error {
			return commit(c, hub.CommitRequest{Delete: []string{"a/../"}})
		}},
		{"commit on head of a/b.git", `hub: commit: repo "a/b.git"`, func(c *hub.Client) error { return onHead(c, "a/b.git", "main") }},
		{"commit on head of branch x.lock", `hub: commit: revision "x.lock"`, func(c *hub.Client) error { return onHead(c, "org/m", "x.lock") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(noRequests(t))
			require.ErrorIs(t, err, hub.ErrInvalidName)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.NoFileExists(t, dst+".incomplete", "a refused download opened its file")
}

// TestNamesEscapedPerSegment sends valid names that need escaping and reads the request
// line the server got: every segment is escaped on its own, and the repo id's slash stays.
func TestNamesEscapedPerSegment(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("X-Error-Code", "EntryNotFound")
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	cl := hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	ctx := context.Background()
	_, _ = cl.ReadFile(ctx, "org/m", "a%2fb", "dir/a?b#c%2fd e.json")
	_, _ = cl.ModelInfo(ctx, "org/m", hub.InfoOptions{Revision: "refs/pr/1"})
	_, _ = cl.FileMeta(ctx, "org/m", "", "README.md")
	_ = cl.AuthCheck(ctx, "org/m")
	assert.Equal(t, []string{
		"GET /org/m/resolve/a%252fb/dir/a%3Fb%23c%252fd%20e.json",
		"GET /api/models/org/m/revision/refs%2Fpr%2F1",
		"HEAD /org/m/resolve/main/README.md",
		"GET /api/models/org/m/auth-check",
	}, got)
}
