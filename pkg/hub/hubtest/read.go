package hubtest

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c := s.who(r)
	if c.Bad || c.anonymous() {
		badToken(w)
		return
	}
	role := "read"
	if c.Write {
		role = "write"
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": "user", "name": c.User,
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{"displayName": "hubtest", "role": role}}})
}

// tree serves GET /api/models/{id}/tree/{rev}[/{path}].
func (s *Server) tree(w http.ResponseWriter, r *http.Request, id, rev, dir string) {
	c := s.who(r) // before s.mu: who takes it
	s.mu.Lock()
	defer s.mu.Unlock()
	_, cm := s.readableAt(w, c, id, rev)
	if cm == nil {
		return
	}
	recursive := r.URL.Query().Get("recursive") == "true" || r.URL.Query().Get("recursive") == "1"
	prefix := ""
	if dir != "" {
		prefix = strings.TrimSuffix(dir, "/") + "/"
	}
	out := []map[string]any{}
	dirs := map[string]bool{}
	for _, p := range sortedPaths(cm.Files) {
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			d := prefix + rel[:i]
			if !dirs[d] {
				dirs[d] = true
				out = append(out, map[string]any{"type": "directory", "oid": gitSHA1([]byte(d)), "size": 0, "path": d})
			}
			if !recursive {
				continue
			}
		}
		e := cm.Files[p]
		item := map[string]any{"type": "file", "oid": blobID(e), "size": e.Size, "path": p}
		if e.LFS {
			item["lfs"] = map[string]any{"oid": e.OID, "size": e.Size, "pointerSize": len(lfsPointer(e))}
		}
		out = append(out, item)
	}
	if dir != "" && len(out) == 0 {
		writeError(w, http.StatusNotFound, "EntryNotFound", fmt.Sprintf("%s does not exist on %q", dir, rev))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// resolve serves a file: regular files directly, LFS files by a redirect to the CDN.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, id, rev, path string, raw bool) {
	c := s.who(r)
	s.mu.Lock()
	rp := s.readable(w, c, id)
	if rp == nil {
		s.mu.Unlock()
		return
	}
	if path != "README.md" && path != ".gitattributes" && !gateOpen(w, c, rp) {
		s.mu.Unlock()
		return
	}
	cm := revision(w, rp, rev)
	if cm == nil {
		s.mu.Unlock()
		return
	}
	e, ok := cm.Files[path]
	sha := cm.SHA
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
		return
	}
	w.Header().Set("X-Repo-Commit", sha)
	w.Header().Set("Accept-Ranges", "bytes")
	if e.LFS && raw {
		w.Header().Set("ETag", `"`+blobID(e)+`"`)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(lfsPointer(e)))
		return
	}
	if e.LFS {
		w.Header().Set("X-Linked-Etag", `"`+e.OID+`"`)
		w.Header().Set("X-Linked-Size", strconv.FormatInt(e.Size, 10))
		w.Header().Set("ETag", `"`+blobID(e)+`"`)
		http.Redirect(w, r, base(r)+"/lfs-cdn/"+e.OID+"?repo="+id, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+e.OID+`"`)
	serveFile(w, r, e.Blob)
}

// serveCDN serves an LFS object with Range support, like the Hub's CDN.
func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request, oid string) {
	if s.blobs.hasLFS(oid) < 0 {
		writeError(w, http.StatusNotFound, "", "NoSuchKey")
		return
	}
	w.Header().Set("ETag", `"`+oid+`"`)
	serveFile(w, r, s.blobs.lfsPath(oid))
}

func serveFile(w http.ResponseWriter, r *http.Request, path string) {
	f, err := os.Open(path)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "hubtest: "+err.Error())
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, f)
}

func (s *Server) commits(w http.ResponseWriter, r *http.Request, id, rev string) {
	c := s.who(r) // before s.mu: who takes it
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, cm := s.readableAt(w, c, id, rev)
	if cm == nil {
		return
	}
	out := []map[string]any{}
	for _, h := range rp.history(cm) {
		out = append(out, map[string]any{"id": h.SHA, "title": h.Title, "message": h.Message,
			"date": h.Time.UTC().Format(time.RFC3339Nano), "authors": []map[string]string{{"user": h.Author}}, "parents": parents(h)})
	}
	writeJSON(w, http.StatusOK, out)
}

func parents(c *commit) []string {
	if c.Parent == "" {
		return []string{}
	}
	return []string{c.Parent}
}

func (s *Server) refs(w http.ResponseWriter, r *http.Request, id string) {
	c := s.who(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.readable(w, c, id)
	if rp == nil {
		return
	}
	branches := []map[string]string{}
	for _, name := range sortedKeys(rp.Branches) {
		branches = append(branches, map[string]string{"name": name, "ref": "refs/heads/" + name, "targetCommit": rp.Branches[name]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"branches": branches, "tags": []any{}, "converts": []any{}})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Server) authCheck(w http.ResponseWriter, r *http.Request, id string) {
	c := s.who(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.readable(w, c, id)
	if rp == nil || !gateOpen(w, c, rp) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
