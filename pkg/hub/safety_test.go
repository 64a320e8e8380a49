package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// rewriting is a transport that lets a test change a response before the client reads it:
// a server that misbehaves in one way, for a safety check that exists for that way.
type rewriting struct {
	edit func(*http.Request, *http.Response) // may replace the body
	puts atomic.Int32                        // requests whose path contains "/part/"
}

func (r *rewriting) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/part/") {
		r.puts.Add(1)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.edit(req, resp)
	}
	return resp, err
}

func replaceBody(resp *http.Response, b []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", itoa(len(b)))
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func clientWith(srv *hubtest.Server, tr http.RoundTripper) *hub.Client {
	return hub.New(hub.Options{Endpoint: srv.URL, Token: testToken, HTTPClient: &http.Client{Transport: tr},
		RetryWaitMin: time.Millisecond, RetryWaitMax: 20 * time.Millisecond, MaxRateLimitWait: 2 * time.Second})
}

// TestMultipartPartCountChecked: a batch answer that names one part URL too few would, if
// uploaded as given, complete an object missing its tail. The client counts the parts the
// file needs and refuses before sending any.
func TestMultipartPartCountChecked(t *testing.T) {
	srv := hubtest.New(t)
	srv.MultipartThreshold, srv.ChunkSize = 1<<20, 256<<10
	tr := &rewriting{edit: func(req *http.Request, resp *http.Response) {
		if !strings.Contains(req.URL.Path, "objects/batch") || resp.StatusCode != http.StatusOK {
			return
		}
		var ans map[string]any
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &ans) != nil {
			replaceBody(resp, b)
			return
		}
		for _, o := range ans["objects"].([]any) {
			if up, ok := o.(map[string]any)["actions"].(map[string]any)["upload"].(map[string]any); ok {
				delete(up["header"].(map[string]any), "00005") // the file needs 5 parts of 256 KiB
			}
		}
		b, _ = json.Marshal(ans)
		replaceBody(resp, b)
	}}
	c := clientWith(srv, tr)
	ctx := context.Background()
	must(c.CreateRepo(ctx, "org/pub", hub.RepoOptions{}))(t)
	head := srv.Head("org/pub")
	_, err := c.Commit(ctx, hub.CommitRequest{Repo: "org/pub", Summary: "s",
		Add: []hub.CommitFile{{PathInRepo: "m.pte", LocalPath: writeFile(t, "m.pte", pattern(1<<20+5, 4))}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the server gave 4 part URLs for 5 parts")
	assert.Zero(t, tr.puts.Load(), "no part was sent")
	assert.Equal(t, head, srv.Head("org/pub"), "nothing was committed")
}

// TestDownloadChecksSHA256: an LFS file whose bytes arrive changed (same length) is not
// left in place; the error names the mismatch.
func TestDownloadChecksSHA256(t *testing.T) {
	srv := hubtest.New(t)
	srv.MustAddModel(t, "org/m", map[string][]byte{"model.safetensors": pattern(2<<20, 3)})
	tr := &rewriting{edit: func(req *http.Request, resp *http.Response) {
		if !strings.Contains(req.URL.Path, "/lfs-cdn/") || resp.StatusCode/100 != 2 {
			return
		}
		b, _ := io.ReadAll(resp.Body)
		b[len(b)/2] ^= 0x40
		replaceBody(resp, b)
	}}
	dst := filepath.Join(t.TempDir(), "model.safetensors")
	_, err := clientWith(srv, tr).Download(context.Background(), "org/m", "main", "model.safetensors", dst)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not match the Hub's")
	_, statErr := os.Stat(dst)
	assert.True(t, os.IsNotExist(statErr), "no file at the destination")
}
