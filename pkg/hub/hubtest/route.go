package hubtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// route dispatches on the escaped path, so that a revision like refs%2Fpr%2F1 stays one
// segment.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	seg := splitPath(r.URL.EscapedPath())
	switch {
	case len(seg) == 3 && seg[0] == "api" && seg[1] == "repos" && seg[2] == "create" && r.Method == http.MethodPost:
		s.createRepo(w, r)
	case len(seg) == 2 && seg[0] == "api" && seg[1] == "whoami-v2":
		s.whoami(w, r)
	case len(seg) == 2 && seg[0] == "api" && seg[1] == "models" && r.Method == http.MethodGet:
		s.listModels(w, r)
	case len(seg) >= 4 && seg[0] == "api" && seg[1] == "models":
		s.routeModelAPI(w, r, seg[2]+"/"+seg[3], seg[4:])
	case len(seg) >= 2 && seg[0] == "lfs-storage":
		s.routeStorage(w, r, seg[1:])
	case len(seg) == 2 && seg[0] == "lfs-cdn" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.serveCDN(w, r, seg[1])
	case len(seg) == 6 && strings.HasSuffix(seg[1], ".git") && strings.Join(seg[2:5], "/") == "info/lfs/objects":
		if id := seg[0] + "/" + strings.TrimSuffix(seg[1], ".git"); !refuseRepo(w, id) {
			s.routeLFS(w, r, id, seg[5])
		}
	case len(seg) >= 5 && (seg[2] == "resolve" || seg[2] == "raw") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		id, path := seg[0]+"/"+seg[1], strings.Join(seg[4:], "/")
		if !refuseRepo(w, id) && !refuseRev(w, seg[3]) && !refusePath(w, path) {
			s.resolve(w, r, id, seg[3], path, seg[2] == "raw")
		}
	default:
		writeError(w, http.StatusNotFound, "", "hubtest: no route for "+r.Method+" "+r.URL.Path)
	}
}

func (s *Server) routeModelAPI(w http.ResponseWriter, r *http.Request, id string, rest []string) {
	verb := ""
	if len(rest) > 0 {
		verb = rest[0]
	}
	if refuseModelNames(w, id, rest) {
		return
	}
	arg := func(i int) string {
		if len(rest) > i {
			return rest[i]
		}
		return ""
	}
	switch {
	case verb == "" && r.Method == http.MethodGet:
		s.modelInfo(w, r, id, "main")
	case verb == "revision" && len(rest) == 2 && r.Method == http.MethodGet:
		s.modelInfo(w, r, id, rest[1])
	case verb == "tree" && len(rest) >= 2 && r.Method == http.MethodGet:
		s.tree(w, r, id, rest[1], strings.Join(rest[2:], "/"))
	case verb == "preupload" && len(rest) == 2 && r.Method == http.MethodPost:
		s.preupload(w, r, id, rest[1])
	case verb == "commit" && len(rest) == 2 && r.Method == http.MethodPost:
		s.commit(w, r, id, rest[1])
	case verb == "commits" && r.Method == http.MethodGet:
		s.commits(w, r, id, arg(1))
	case verb == "refs" && r.Method == http.MethodGet:
		s.refs(w, r, id)
	case verb == "auth-check" && r.Method == http.MethodGet:
		s.authCheck(w, r, id)
	default:
		writeError(w, http.StatusNotFound, "", "hubtest: no route for "+r.Method+" "+r.URL.Path)
	}
}

// splitPath splits an escaped path into unescaped segments.
func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		out = append(out, s)
	}
	return out
}

// writeError answers like the Hub: X-Error-Code, X-Error-Message and {"error": …}.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Request-Id", "hubtest-"+randomHex(8))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Request-Id", "hubtest-"+randomHex(8))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// base is the URL clients reached us by; Link headers and presigned URLs are built on it.
func base(r *http.Request) string { return "http://" + r.Host }
