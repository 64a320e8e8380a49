package ghtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

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
