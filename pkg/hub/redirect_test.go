package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// TestTokenStaysOnTheHub sends a download through a redirect to another host (a CDN) that
// ignores Range: the token must not follow, and ReadRange must still return the right bytes.
func TestTokenStaysOnTheHub(t *testing.T) {
	content := pattern(1000, 3)
	var mu sync.Mutex
	var cdnAuth []string
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cdnAuth = append(cdnAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		_, _ = w.Write(content) // ignores Range, like some proxies
	}))
	defer cdn.Close()
	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("the Hub did not get the token: %q", r.Header.Get("Authorization"))
		}
		w.Header().Set("X-Repo-Commit", "abc")
		w.Header().Set("X-Linked-Etag", `"`+sha256Hex(content)+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(content)))
		http.Redirect(w, r, cdn.URL+"/blob", http.StatusFound)
	}))
	defer hubSrv.Close()
	c := hub.New(hub.Options{Endpoint: hubSrv.URL, Token: testToken})
	ctx := context.Background()

	got := must(c.ReadRange(ctx, "org/m", "main", "w.bin", 100, 50))(t)
	if string(got) != string(content[100:150]) {
		t.Errorf("ReadRange through a Range-ignoring CDN returned the wrong bytes")
	}
	d := must(c.Download(ctx, "org/m", "main", "w.bin", t.TempDir()+"/w.bin"))(t)
	if d.SHA256 != sha256Hex(content) || d.Commit != "abc" {
		t.Errorf("download = %+v", d)
	}
	meta := must(c.FileMeta(ctx, "org/m", "main", "w.bin"))(t)
	if meta.Location != cdn.URL+"/blob" || meta.Size != 1000 {
		t.Errorf("FileMeta followed the redirect: %+v", meta)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cdnAuth) != 2 {
		t.Errorf("CDN saw %d requests, want 2 (range read, download; HEAD stays on the Hub)", len(cdnAuth))
	}
	for _, a := range cdnAuth {
		if a != "" {
			t.Errorf("the token followed the redirect to the CDN: %q", a)
		}
	}
}
