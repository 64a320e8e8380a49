package release

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v62/github"
)

// fakeGitHub speaks the part of the REST API go-github's release calls use: releases by
// tag, create and edit, list, delete and upload assets. Queued answers let a test make a
// call fail first (a 5xx, a rate limit).
type fakeGitHub struct {
	mu       sync.Mutex
	releases map[int64]*github.RepositoryRelease
	assets   map[int64][]*fakeAsset // by release id
	nextID   int64
	queue    []func(w http.ResponseWriter) // answers that pre-empt the next requests
	log      []string
}

type fakeAsset struct {
	id   int64
	name string
	data []byte
}

var (
	tagPath    = regexp.MustCompile(`^/repos/o/r/releases/tags/(.+)$`)
	relPath    = regexp.MustCompile(`^/repos/o/r/releases/(\d+)$`)
	assetsPath = regexp.MustCompile(`^/repos/o/r/releases/(\d+)/assets$`)
	assetPath  = regexp.MustCompile(`^/repos/o/r/releases/assets/(\d+)$`)
)

func newFake(t *testing.T) (*fakeGitHub, *github.Client) {
	f, srv := startFake(t)
	gh := github.NewClient(nil).WithAuthToken("test-token")
	u, _ := url.Parse(srv.URL + "/")
	gh.BaseURL, gh.UploadURL = u, u
	return f, gh
}

func startFake(t *testing.T) (*fakeGitHub, *httptest.Server) {
	f := &fakeGitHub{releases: map[int64]*github.RepositoryRelease{}, assets: map[int64][]*fakeAsset{}, nextID: 1}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeGitHub) fail(answers ...func(w http.ResponseWriter)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, answers...)
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	if len(f.queue) > 0 {
		answer := f.queue[0]
		f.queue = f.queue[1:]
		answer(w)
		return
	}
	// A GitHub Enterprise Server serves the API under /api/v3 and uploads under /api/uploads.
	p := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/api/v3"), "/api/uploads")
	switch {
	case r.Method == "GET" && tagPath.MatchString(p):
		tag := tagPath.FindStringSubmatch(p)[1]
		for _, rel := range f.releases {
			if rel.GetTagName() == tag {
				writeJSON(w, 200, rel)
				return
			}
		}
		writeJSON(w, 404, map[string]string{"message": "Not Found"})
	case r.Method == "POST" && p == "/repos/o/r/releases":
		var rel github.RepositoryRelease
		_ = json.NewDecoder(r.Body).Decode(&rel)
		rel.ID = github.Int64(f.nextID)
		f.nextID++
		f.releases[rel.GetID()] = &rel
		writeJSON(w, 201, &rel)
	case r.Method == "PATCH" && relPath.MatchString(p):
		rel := f.releases[id(relPath, p)]
		var edit github.RepositoryRelease
		_ = json.NewDecoder(r.Body).Decode(&edit)
		rel.Name, rel.Body = edit.Name, edit.Body
		writeJSON(w, 200, rel)
	case r.Method == "GET" && assetsPath.MatchString(p):
		var out []*github.ReleaseAsset
		for _, a := range f.assets[id(assetsPath, p)] {
			out = append(out, &github.ReleaseAsset{ID: github.Int64(a.id), Name: github.String(a.name)})
		}
		writeJSON(w, 200, out)
	case r.Method == "DELETE" && assetPath.MatchString(p):
		aid := id(assetPath, p)
		for rid, as := range f.assets {
			for i, a := range as {
				if a.id == aid {
					f.assets[rid] = append(as[:i:i], as[i+1:]...)
				}
			}
		}
		w.WriteHeader(204)
	case r.Method == "POST" && assetsPath.MatchString(p):
		rid, name := id(assetsPath, p), r.URL.Query().Get("name")
		for _, a := range f.assets[rid] {
			if a.name == name {
				writeJSON(w, 422, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"code": "already_exists"}}})
				return
			}
		}
		data, _ := io.ReadAll(r.Body)
		a := &fakeAsset{id: f.nextID, name: name, data: data}
		f.nextID++
		f.assets[rid] = append(f.assets[rid], a)
		writeJSON(w, 201, &github.ReleaseAsset{ID: github.Int64(a.id), Name: github.String(name), Size: github.Int(len(data))})
	default:
		writeJSON(w, 404, map[string]string{"message": "fake GitHub has no " + r.Method + " " + p})
	}
}

func id(re *regexp.Regexp, p string) int64 {
	var n int64
	fmt.Sscan(re.FindStringSubmatch(p)[1], &n)
	return n
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
