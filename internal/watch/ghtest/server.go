// Package ghtest is a local GitHub REST API holding what the watcher uses: workflow
// dispatch, workflow runs by status, and the git refs, trees, commits and contents of a
// state branch. It keeps enough of GitHub's rules (a ref moves only by fast-forward unless
// forced, an existing ref cannot be created again) for a concurrent save to conflict as it
// does on GitHub.
package ghtest

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Run is one workflow run the server holds.
type Run struct {
	Workflow string
	Title    string
	Status   string
}

// Dispatch is one dispatch request the server received, answered or not.
type Dispatch struct {
	Workflow, Ref, Model, Revision string
	// Status is what the server answered.
	Status int
}

// DispatchFault decides a dispatch's answer: the status (0 or 204 for success) and whether
// the run is created anyway (GitHub has answered 502 after creating it).
type DispatchFault func(d Dispatch) (status int, created bool)

// Server is a running fake GitHub for one repository.
type Server struct {
	URL         string
	Owner, Repo string

	mu         sync.Mutex
	runs       []*Run
	dispatches []Dispatch
	fault      DispatchFault
	failRuns   map[string]int // workflow -> status answered to run lists
	failGit    int            // status answered to tree creation
	refs       map[string]string
	commits    map[string]commit
	trees      map[string]map[string]string
	n          int
}

type commit struct {
	tree    string
	parents []string
}

// New starts a server for owner/repo and closes it when the test ends.
func New(t testing.TB, owner, repo string) *Server {
	s := &Server{Owner: owner, Repo: repo, failRuns: map[string]int{}, refs: map[string]string{}, commits: map[string]commit{}, trees: map[string]map[string]string{}}
	mux := http.NewServeMux()
	p := "/repos/" + owner + "/" + repo
	mux.HandleFunc("POST "+p+"/actions/workflows/{file}/dispatches", s.dispatch)
	mux.HandleFunc("GET "+p+"/actions/workflows/{file}/runs", s.listRuns)
	mux.HandleFunc("GET "+p+"/git/ref/{ref...}", s.getRef)
	mux.HandleFunc("POST "+p+"/git/refs", s.createRef)
	mux.HandleFunc("PATCH "+p+"/git/refs/{ref...}", s.updateRef)
	mux.HandleFunc("POST "+p+"/git/trees", s.createTree)
	mux.HandleFunc("POST "+p+"/git/commits", s.createCommit)
	mux.HandleFunc("GET "+p+"/contents/{path...}", s.contents)
	srv := httptest.NewServer(refuseDots(mux))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// AddRun adds a run, e.g. one already in flight or a ghost titled without "@".
func (s *Server) AddRun(r Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, &r)
}

// Complete marks every run of the workflow completed.
func (s *Server) Complete(workflow string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		if r.Workflow == workflow {
			r.Status = "completed"
		}
	}
}

// Runs returns the runs, oldest first.
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Run, 0, len(s.runs))
	for _, r := range s.runs {
		out = append(out, *r)
	}
	return out
}

// Dispatches returns every dispatch request received, in order.
func (s *Server) Dispatches() []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dispatches)
}

// FailDispatch sets how dispatches are answered; nil answers every one with 204.
func (s *Server) FailDispatch(f DispatchFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// FailRuns answers the workflow's run lists with status (0 serves them again).
func (s *Server) FailRuns(workflow string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failRuns[workflow] = status
}

// FailSave answers tree creation with status, so that a state save fails (0 heals it).
func (s *Server) FailSave(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failGit = status
}

// File returns a file at the head of a branch, and whether it exists.
func (s *Server) File(branch, path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.commits[s.refs["refs/heads/"+branch]]
	if !ok {
		return "", false
	}
	body, ok := s.trees[c.tree][path]
	return body, ok
}

// SetFile commits a file on a branch (creating it as an orphan when missing).
func (s *Server) SetFile(branch, path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tree := s.id("tree")
	s.trees[tree] = map[string]string{path: body}
	var parents []string
	if head, ok := s.refs["refs/heads/"+branch]; ok {
		parents = []string{head}
	}
	c := s.id("commit")
	s.commits[c] = commit{tree: tree, parents: parents}
	s.refs["refs/heads/"+branch] = c
}

// Commits is how many commits the branch's history holds.
func (s *Server) Commits(branch string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	c, ok := s.refs["refs/heads/"+branch]
	for ok {
		n++
		ps := s.commits[c].parents
		ok = len(ps) > 0
		if ok {
			c = ps[0]
		}
	}
	return n
}

func (s *Server) id(kind string) string {
	s.n++
	h := sha1.Sum(fmt.Appendf(nil, "%s %d", kind, s.n))
	return hex.EncodeToString(h[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}
