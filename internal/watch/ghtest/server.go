// Package ghtest is a local GitHub REST API holding what the watcher uses: workflow
// dispatch, workflow runs by status, and the git refs, trees, commits and contents of a
// state branch. It keeps enough of GitHub's rules (a ref moves only by fast-forward unless
// forced, an existing ref cannot be created again) for a concurrent save to conflict as it
// does on GitHub.
package ghtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
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

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Ref    string            `json:"ref"`
		Inputs map[string]string `json:"inputs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Ref == "" {
		fail(w, http.StatusUnprocessableEntity, "ref is required")
		return
	}
	if refuseWorkflow(w, r.PathValue("file")) || refuseRef(w, body.Ref) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := Dispatch{Workflow: r.PathValue("file"), Ref: body.Ref, Model: body.Inputs["model_id"], Revision: body.Inputs["revision"], Status: http.StatusNoContent}
	created := true
	if s.fault != nil {
		if st, c := s.fault(d); st != 0 && st != http.StatusNoContent {
			d.Status, created = st, c
		}
	}
	s.dispatches = append(s.dispatches, d)
	if created {
		title := fmt.Sprintf("%s: %s@%s", strings.TrimSuffix(d.Workflow, ".yml"), d.Model, d.Revision)
		s.runs = append(s.runs, &Run{Workflow: d.Workflow, Title: title, Status: "queued"})
	}
	if d.Status != http.StatusNoContent {
		fail(w, d.Status, http.StatusText(d.Status))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	file := r.PathValue("file")
	if refuseWorkflow(w, file) {
		return
	}
	if st := s.failRuns[file]; st != 0 {
		fail(w, st, http.StatusText(st))
		return
	}
	status := r.URL.Query().Get("status")
	runs := []map[string]any{}
	for i, run := range s.runs {
		if run.Workflow == file && (status == "" || run.Status == status) {
			runs = append(runs, map[string]any{"id": i + 1, "name": file, "display_title": run.Title, "status": run.Status})
		}
	}
	perPage, page := atoiOr(r.URL.Query().Get("per_page"), 30), atoiOr(r.URL.Query().Get("page"), 1)
	total := len(runs)
	from, to := min((page-1)*perPage, total), min(page*perPage, total)
	if to < total {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page+1))
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, "http://"+r.Host, r.URL.Path, q.Encode()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": total, "workflow_runs": runs[from:to]})
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}

func (s *Server) getRef(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refuseRef(w, r.PathValue("ref")) {
		return
	}
	ref := "refs/" + r.PathValue("ref")
	sha, ok := s.refs[ref]
	if !ok {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ref": ref, "object": map[string]string{"sha": sha, "type": "commit"}})
}

func (s *Server) createRef(w http.ResponseWriter, r *http.Request) {
	var body struct{ Ref, SHA string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if !strings.HasPrefix(body.Ref, "refs/") {
		fail(w, http.StatusUnprocessableEntity, "Reference name must start with 'refs/' and have at least two slashes")
		return
	}
	if refuseRef(w, body.Ref) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.refs[body.Ref]; ok {
		fail(w, http.StatusUnprocessableEntity, "Reference already exists")
		return
	}
	if _, ok := s.commits[body.SHA]; !ok {
		fail(w, http.StatusUnprocessableEntity, "Object does not exist")
		return
	}
	s.refs[body.Ref] = body.SHA
	writeJSON(w, http.StatusCreated, map[string]any{"ref": body.Ref, "object": map[string]string{"sha": body.SHA, "type": "commit"}})
}

func (s *Server) updateRef(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if refuseRef(w, r.PathValue("ref")) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ref := "refs/" + r.PathValue("ref")
	head, ok := s.refs[ref]
	switch {
	case !ok:
		fail(w, http.StatusUnprocessableEntity, "Reference does not exist")
	case !body.Force && !s.descends(body.SHA, head):
		fail(w, http.StatusUnprocessableEntity, "Update is not a fast forward")
	default:
		s.refs[ref] = body.SHA
		writeJSON(w, http.StatusOK, map[string]any{"ref": ref, "object": map[string]string{"sha": body.SHA, "type": "commit"}})
	}
}

// descends says whether commit c has ancestor a (or is a).
func (s *Server) descends(c, a string) bool {
	for c != "" {
		if c == a {
			return true
		}
		ps := s.commits[c].parents
		if len(ps) == 0 {
			return false
		}
		c = ps[0]
	}
	return false
}

func (s *Server) createTree(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tree []struct{ Path, Mode, Type, Content string } `json:"tree"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failGit != 0 {
		fail(w, s.failGit, http.StatusText(s.failGit))
		return
	}
	files := map[string]string{}
	for _, e := range body.Tree {
		if refusePath(w, e.Path) {
			return
		}
		files[e.Path] = e.Content
	}
	sha := s.id("tree")
	s.trees[sha] = files
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
}

func (s *Server) createCommit(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Message string   `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.trees[body.Tree]; !ok {
		fail(w, http.StatusUnprocessableEntity, "Tree SHA does not exist")
		return
	}
	sha := s.id("commit")
	s.commits[sha] = commit{tree: body.Tree, parents: body.Parents}
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
}

func (s *Server) contents(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("ref")
	if refusePath(w, r.PathValue("path")) || ref != "" && refuseRef(w, ref) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sha, ok := s.refs["refs/heads/"+ref]; ok {
		ref = sha
	}
	c, ok := s.commits[ref]
	body, found := s.trees[c.tree][r.PathValue("path")]
	if !ok || !found {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "file", "encoding": "base64", "path": r.PathValue("path"),
		"content": base64.StdEncoding.EncodeToString([]byte(body)),
	})
}
