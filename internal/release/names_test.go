package release

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublishRefusesBadNamesBeforeSending: go-github puts the owner, the repository and the
// tag into its URLs unescaped, so each is checked before the first request.
func TestPublishRefusesBadNamesBeforeSending(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the publisher sent %s %s", r.Method, r.URL.RequestURI())
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	gh := github.NewClient(nil)
	u, err := url.Parse(srv.URL + "/")
	require.NoError(t, err)
	gh.BaseURL, gh.UploadURL = u, u
	tests := []struct {
		name, owner, repo, tag, want string
	}{
		{"owner ..", "..", "r", "v1", `release in "../r": the repository is not owner/name`},
		{"owner a?b", "a?b", "r", "v1", `release in "a?b/r"`},
		{"repo a%2fb", "o", "a%2fb", "v1", `release in "o/a%2fb"`},
		{"repo ..", "o", "..", "v1", `release in "o/.."`},
		{"tag a..b", "o", "r", "a..b", `release tag "a..b" is not a git branch`},
		{"tag a?b", "o", "r", "a?b", `release tag "a?b"`},
		{"tag ../x", "o", "r", "../x", `release tag "../x"`},
		{"empty tag", "o", "r", "", `release tag ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Publisher{GH: gh, Owner: tc.owner, Repo: tc.repo, Attempts: 1}
			_, err := p.Publish(context.Background(), &Release{Tag: tc.tag, Title: tc.tag})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestFromEnvRefusesBadRepository(t *testing.T) {
	for _, repo := range []string{"exe-expo", "../X", "o/r/x", "o/r?x", "-o/r", "o/.."} {
		t.Setenv("GITHUB_REPOSITORY", repo)
		t.Setenv("GH_TOKEN", "t")
		_, err := FromEnv()
		require.Error(t, err, repo)
		assert.Contains(t, err.Error(), `GITHUB_REPOSITORY "`+repo+`" is not owner/name`)
	}
}

// TestPublishEscapesTheTag: a tag git allows but a URL does not carry as is ('%') reaches
// GitHub as one escaped segment.
func TestPublishEscapesTheTag(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.EscapedPath())
		mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	gh := github.NewClient(nil)
	u, err := url.Parse(srv.URL + "/")
	require.NoError(t, err)
	gh.BaseURL = u
	p := &Publisher{GH: gh, Owner: "o", Repo: "r", Attempts: 1}
	_, err = p.Publish(context.Background(), &Release{Tag: "m-a%2fb"})
	require.Error(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"/repos/o/r/releases/tags/m-a%252fb"}, got)
}
