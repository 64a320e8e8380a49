package hubtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// caller is who sent a request: anonymous (ok, no user), a user, or a bad token.
type caller struct {
	User  string
	Write bool
	Bad   bool
}

func (c caller) anonymous() bool { return c.User == "" }

// who reads the bearer token.
func (s *Server) who(r *http.Request) caller {
	h := r.Header.Get("Authorization")
	if h == "" {
		return caller{}
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return caller{Bad: true}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tokens) == 0 {
		if strings.HasPrefix(tok, "hf_") {
			return caller{User: "hubtest", Write: true}
		}
		return caller{Bad: true}
	}
	t, ok := s.tokens[tok]
	if !ok {
		return caller{Bad: true}
	}
	return caller{User: t.User, Write: t.Write}
}

// badToken answers the Hub's 401 for a token it does not know.
func badToken(w http.ResponseWriter) {
	writeError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
}

// readable finds a repo the caller may read and answers the error itself when there is
// none: 401 for anonymous callers and private repos, 404 otherwise, with RepoNotFound.
func (s *Server) readable(w http.ResponseWriter, c caller, id string) *repo {
	if c.Bad {
		badToken(w)
		return nil
	}
	rp := s.repos[id]
	if rp != nil && rp.Private && (c.anonymous() || !s.owns(c, rp)) {
		rp = nil
	}
	if rp == nil {
		status := http.StatusNotFound
		if c.anonymous() {
			status = http.StatusUnauthorized
		}
		writeError(w, status, "RepoNotFound", "Repository not found")
		return nil
	}
	if rp.Disabled {
		writeError(w, http.StatusForbidden, "", "Access to this resource is disabled.")
		return nil
	}
	return rp
}

// owns reports whether the caller may write to (and read a private) rp.
func (s *Server) owns(c caller, rp *repo) bool {
	if c.User == "hubtest" && len(s.tokens) == 0 {
		return true
	}
	ns, _, _ := strings.Cut(rp.ID, "/")
	return c.User == ns || rp.Authorized[c.User] && c.Write
}

// gateOpen answers the Hub's gated-repo errors and reports whether the caller may
// download from rp.
func gateOpen(w http.ResponseWriter, c caller, rp *repo) bool {
	if rp.Gated == "" || rp.Authorized[c.User] {
		return true
	}
	ns, _, _ := strings.Cut(rp.ID, "/")
	if !c.anonymous() && c.User == ns {
		return true
	}
	if c.anonymous() {
		writeError(w, http.StatusUnauthorized, "GatedRepo", fmt.Sprintf("Access to model %s is restricted. You must have access to it and be authenticated to access it. Please log in.", rp.ID))
		return false
	}
	writeError(w, http.StatusForbidden, "GatedRepo", fmt.Sprintf("Access to model %s is restricted and you are not in the authorized list. Visit https://huggingface.co/%s to ask for access.", rp.ID, rp.ID))
	return false
}

// writable finds a repo the caller may write to, answering the error otherwise.
func (s *Server) writable(w http.ResponseWriter, c caller, id string) *repo {
	if c.Bad {
		badToken(w)
		return nil
	}
	if c.anonymous() {
		writeError(w, http.StatusUnauthorized, "", "You must be authenticated to write to a repo. Set a token with write access.")
		return nil
	}
	rp := s.repos[id]
	if rp == nil || (rp.Private && !s.owns(c, rp)) {
		writeError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		return nil
	}
	if !c.Write || !s.owns(c, rp) {
		writeError(w, http.StatusForbidden, "", "You don't have the rights to write to "+id+". Check your token's role and scope.")
		return nil
	}
	return rp
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
