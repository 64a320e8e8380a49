package hub

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerWait(t *testing.T) {
	tests := []struct {
		name       string
		ratelimit  string
		retryAfter string
		want       time.Duration
		ok         bool
	}{
		{"quota spent", `"api";r=0;t=55`, "3", 56 * time.Second, true},
		{"quota left uses retry-after", `"api";r=12;t=55`, "3", 3 * time.Second, true},
		{"retry-after seconds", "", "7", 7 * time.Second, true},
		{"nothing", "", "", 0, false},
		{"garbage", "", "soon", 0, false},
	}
	for _, tc := range tests {
		h := http.Header{}
		if tc.ratelimit != "" {
			h.Set("RateLimit", tc.ratelimit)
		}
		if tc.retryAfter != "" {
			h.Set("Retry-After", tc.retryAfter)
		}
		got, ok := serverWait(h)
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}

	// An HTTP date is read against the clock when serverWait runs, which lies between the
	// two readings here however long the machine takes.
	date := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	h := http.Header{"Retry-After": {date.Format(http.TimeFormat)}}
	before := time.Now()
	got, ok := serverWait(h)
	after := time.Now()
	require.True(t, ok, "retry-after date")
	assert.GreaterOrEqual(t, got, date.Sub(after), "retry-after date")
	assert.LessOrEqual(t, got, date.Sub(before), "retry-after date")

	b := backoff(10 * time.Second)
	resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"600"}}}
	if got := b(time.Second, 8*time.Second, 0, resp); got != 10*time.Second {
		t.Errorf("429 wait not capped: %v", got)
	}
	if got := b(time.Second, 8*time.Second, 5, &http.Response{StatusCode: 500}); got != 8*time.Second {
		t.Errorf("exponential wait not capped: %v", got)
	}
	if got := b(time.Second, 8*time.Second, 1, nil); got != 2*time.Second {
		t.Errorf("second retry waits %v, want 2s", got)
	}
}

func TestNextLink(t *testing.T) {
	tests := map[string]string{
		`<https://huggingface.co/api/models?author=x&cursor=eyJ>; rel="next"`: "https://huggingface.co/api/models?author=x&cursor=eyJ",
		`<https://h/a?p=1>; rel="prev", <https://h/a?p=3>; rel="next"`:        "https://h/a?p=3",
		`<https://h/a?p=1>; rel="prev"`:                                       "",
		``:                                                                    "",
		`<http://127.0.0.1:5/api/models?limit=2&cursor=Mg>;  rel="next"`: "http://127.0.0.1:5/api/models?limit=2&cursor=Mg",
	}
	for h, want := range tests {
		if got := nextLink(h); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestEscaping(t *testing.T) {
	c := New(Options{Endpoint: "https://hub.example/", NoEnvToken: true})
	got := c.resolveURL("org/m", "refs/pr/1", "dir/a b#.json")
	want := "https://hub.example/org/m/resolve/refs%2Fpr%2F1/dir/a%20b%23.json"
	if got != want {
		t.Errorf("resolveURL = %s, want %s", got, want)
	}
}

func TestMapError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		hdr    map[string]string
		body   string
		cl     call
		kind   error
		server string
	}{
		{"bad token", 401, nil, `{"error":"Invalid credentials in Authorization header"}`, call{repo: "a/b"}, ErrUnauthorized, "Invalid credentials in Authorization header"},
		{"old bad token text", 401, nil, `{"error":"Invalid username or password."}`, call{}, ErrUnauthorized, "Invalid username or password."},
		{"401 on a repo", 401, nil, `{"error":"Repository not found"}`, call{repo: "a/b"}, ErrRepoNotFound, "Repository not found"},
		{"disabled", 403, map[string]string{"X-Error-Message": "Access to this resource is disabled."}, ``, call{repo: "a/b"}, ErrDisabled, "Access to this resource is disabled."},
		{"error list", 400, nil, `{"error":["bad path","bad size"]}`, call{}, ErrBadRequest, "bad path; bad size"},
		{"oauth style", 400, nil, `{"error":"invalid_grant","error_description":"token expired"}`, call{}, ErrBadRequest, "invalid_grant: token expired"},
		{"html body dropped", 502, nil, `<html>bad gateway</html>`, call{}, ErrServer, ""},
		{"conflict", 409, nil, `{"error":"another conflicting operation is in progress"}`, call{}, ErrConflict, "another conflicting operation is in progress"},
		{"range", 416, nil, ``, call{}, ErrRangeNotSatisfiable, ""},
		{"plain 404 file", 404, nil, `Not Found`, call{repo: "a/b", path: "x"}, ErrEntryNotFound, "Not Found"},
	}
	for _, tc := range tests {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
		for k, v := range tc.hdr {
			resp.Header.Set(k, v)
		}
		e := mapError(resp, tc.cl)
		if !errors.Is(e, tc.kind) || e.Server != tc.server {
			t.Errorf("%s: kind %v server %q, want %v %q", tc.name, e.Kind, e.Server, tc.kind, tc.server)
		}
	}
}
