package hubtest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

func (s *Server) createRepo(w http.ResponseWriter, r *http.Request) {
	c := s.who(r)
	if c.Bad {
		badToken(w)
		return
	}
	if c.anonymous() {
		writeError(w, http.StatusUnauthorized, "", "You must be authenticated to create a repo")
		return
	}
	var body struct {
		Name         string  `json:"name"`
		Organization *string `json:"organization"`
		Type         string  `json:"type"`
		Visibility   string  `json:"visibility"`
		Private      *bool   `json:"private"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" || strings.Contains(body.Name, "/") {
		writeError(w, http.StatusBadRequest, "", "Invalid repo name")
		return
	}
	if body.Type != "" && body.Type != "model" {
		writeError(w, http.StatusBadRequest, "", "hubtest serves model repos only")
		return
	}
	ns := c.User
	if body.Organization != nil && *body.Organization != "" {
		ns = *body.Organization
	}
	id := ns + "/" + body.Name
	if refuseRepo(w, id) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.Write || (len(s.tokens) > 0 && ns != c.User) {
		writeError(w, http.StatusForbidden, "", "You don't have the rights to create a model under the namespace \""+ns+"\"")
		return
	}
	if _, ok := s.repos[id]; ok {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "You already created this model repo", "url": s.URL + "/" + id})
		return
	}
	rp := s.createLocked(id)
	rp.Private = body.Visibility == "private" || body.Private != nil && *body.Private
	writeJSON(w, http.StatusOK, map[string]string{"url": base(r) + "/" + id, "name": id, "id": id})
}

// createLocked makes a repo with the Hub's initial commit (.gitattributes).
func (s *Server) createLocked(id string) *repo {
	rp := newRepo(id, s.now())
	ga, err := s.blobs.putRegular([]byte(defaultGitattributes))
	files := map[string]entry{}
	if err == nil {
		files[".gitattributes"] = ga
	}
	rp.addCommit("main", nil, "initial commit", "", "hubtest", files, s.now())
	s.repos[id] = rp
	return rp
}

// preupload tells, per file, whether it goes to LFS, and its current oid.
func (s *Server) preupload(w http.ResponseWriter, r *http.Request, id, rev string) {
	c := s.who(r)
	var body struct {
		Files []struct {
			Path   string `json:"path"`
			Size   int64  `json:"size"`
			Sample string `json:"sample"`
		} `json:"files"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "", "Invalid preupload body: "+err.Error())
		return
	}
	for _, f := range body.Files {
		if refusePath(w, f.Path) {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.writable(w, c, id)
	if rp == nil {
		return
	}
	if r.URL.Query().Get("create_pr") != "" {
		writeError(w, http.StatusBadRequest, "", "hubtest does not open pull requests")
		return
	}
	cm := revision(w, rp, rev)
	if cm == nil {
		return
	}
	out := []map[string]any{}
	for _, f := range body.Files {
		sample, _ := base64.StdEncoding.DecodeString(f.Sample)
		mode := "regular"
		if f.Size > 0 && (f.Size > s.RegularMax || lfsByName(f.Path) || bytes.IndexByte(sample, 0) >= 0) {
			mode = "lfs"
		}
		item := map[string]any{"path": f.Path, "uploadMode": mode, "shouldIgnore": false}
		if e, ok := cm.Files[f.Path]; ok {
			item["oid"] = e.OID
		}
		out = append(out, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out, "commitOid": cm.SHA})
}

// commitLine is one NDJSON line of a commit.
type commitLine struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

type commitOp struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
	Algo     string `json:"algo"`
	OID      string `json:"oid"`
	Size     *int64 `json:"size"`
}

// commit applies an NDJSON commit atomically: a stale parentCommit is a 412 and a missing
// LFS object or deleted path fails the whole commit.
func (s *Server) commit(w http.ResponseWriter, r *http.Request, id, rev string) {
	c := s.who(r)
	if r.URL.Query().Get("create_pr") != "" {
		writeError(w, http.StatusBadRequest, "", "hubtest does not open pull requests")
		return
	}
	header, ops, err := s.readCommit(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.writable(w, c, id)
	if rp == nil {
		return
	}
	if _, ok := rp.Branches[rev]; !ok {
		writeError(w, http.StatusNotFound, "RevisionNotFound", fmt.Sprintf("Invalid rev id: %s", rev))
		return
	}
	head := rp.resolve(rev)
	if p := header.ParentCommit; p != "" && (len(p) < 7 || !strings.HasPrefix(head.SHA, p)) {
		writeError(w, http.StatusPreconditionFailed, "", "The branch was updated since you opened this page. Please refresh and try again.")
		return
	}
	files := copyTree(head.Files)
	for _, op := range ops {
		if status, code, msg := s.apply(files, op); status != 0 {
			writeError(w, status, code, msg)
			return
		}
	}
	cm := rp.addCommit(rev, head, header.Summary, header.Description, c.User, files, s.now())
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "commitOid": cm.SHA,
		"commitUrl": base(r) + "/" + id + "/commit/" + cm.SHA, "hookOutput": ""})
}

type commitHeader struct {
	Summary      string `json:"summary"`
	Description  string `json:"description"`
	ParentCommit string `json:"parentCommit"`
}

type pendingOp struct {
	key   string
	op    commitOp
	entry entry
}

// readCommit parses the body and stores regular file contents before the lock is taken.
func (s *Server) readCommit(body io.Reader) (commitHeader, []pendingOp, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(body, 1<<20))
	var header commitHeader
	var ops []pendingOp
	for i := 0; ; i++ {
		var line commitLine
		err := dec.Decode(&line)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return header, nil, fmt.Errorf("invalid NDJSON line %d: %v", i+1, err)
		}
		if i == 0 {
			if line.Key != "header" {
				return header, nil, fmt.Errorf("the first line must be the header, got %q", line.Key)
			}
			if err := json.Unmarshal(line.Value, &header); err != nil || strings.TrimSpace(header.Summary) == "" {
				return header, nil, fmt.Errorf("the commit header needs a non-empty summary")
			}
			continue
		}
		var op commitOp
		if err := json.Unmarshal(line.Value, &op); err != nil || op.Path == "" {
			return header, nil, fmt.Errorf("line %d: operation %q needs a path", i+1, line.Key)
		}
		if msg := badPath(op.Path); msg != "" {
			return header, nil, fmt.Errorf("line %d: %s", i+1, msg)
		}
		p := pendingOp{key: line.Key, op: op}
		if line.Key == "file" {
			if p.entry, err = s.storeInline(op); err != nil {
				return header, nil, fmt.Errorf("line %d (%s): %v", i+1, op.Path, err)
			}
		}
		ops = append(ops, p)
	}
	if header.Summary == "" {
		return header, nil, fmt.Errorf("empty commit body")
	}
	return header, ops, nil
}

func (s *Server) storeInline(op commitOp) (entry, error) {
	var content []byte
	switch op.Encoding {
	case "base64":
		b, err := base64.StdEncoding.DecodeString(op.Content)
		if err != nil {
			return entry{}, fmt.Errorf("bad base64 content: %v", err)
		}
		content = b
	case "utf-8", "":
		content = []byte(op.Content)
	default:
		return entry{}, fmt.Errorf("unknown encoding %q", op.Encoding)
	}
	return s.blobs.putRegular(content)
}

// apply changes files by one operation; a non-zero status is the error answer.
func (s *Server) apply(files map[string]entry, p pendingOp) (int, string, string) {
	op := p.op
	switch p.key {
	case "file":
		files[op.Path] = p.entry
	case "lfsFile":
		if op.Algo != "" && op.Algo != "sha256" {
			return http.StatusBadRequest, "", "unknown algo " + op.Algo
		}
		size := s.blobs.hasLFS(op.OID)
		if size < 0 || op.Size != nil && *op.Size != size {
			return http.StatusBadRequest, "", fmt.Sprintf("Your push was rejected because an LFS pointer pointed to a file that does not exist (%s, %s)", op.Path, op.OID)
		}
		files[op.Path] = entry{Size: size, OID: op.OID, LFS: true, Blob: s.blobs.lfsPath(op.OID)}
	case "deletedFile":
		if _, ok := files[op.Path]; !ok {
			return http.StatusNotFound, "EntryNotFound", "A file with this name doesn't exist: " + op.Path
		}
		delete(files, op.Path)
	case "deletedFolder":
		prefix := strings.TrimSuffix(op.Path, "/") + "/"
		n := 0
		for p := range files {
			if strings.HasPrefix(p, prefix) {
				delete(files, p)
				n++
			}
		}
		if n == 0 {
			return http.StatusNotFound, "EntryNotFound", "A folder with this name doesn't exist: " + op.Path
		}
	default:
		return http.StatusBadRequest, "", "unknown commit operation " + p.key
	}
	return 0, "", ""
}
