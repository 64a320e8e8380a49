package ghtest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// The local GitHub refuses the names GitHub refuses (docs/research/hub.md#names-checked-before-any-request).
// Another owner or repository is GitHub's 404, as before any name check. A ref, tree path
// or state path git would refuse is a 400 here, where GitHub answers 404 or 422 depending
// on the endpoint: a client that sent one has a bug, and the watcher reads a 404 as "no
// state yet" and a 422 as "another run saved first", either of which would hide it.

// refuseDots answers 400, before routing, to a URL path with an empty, '.' or '..'
// segment: http.ServeMux would otherwise clean it and redirect to another resource.
func refuseDots(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, seg := range strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/") {
			if seg == "" || seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") {
				fail(w, http.StatusBadRequest, fmt.Sprintf("Invalid path %q", r.URL.EscapedPath()))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuseRef answers 400 and returns true when ref (e.g. "heads/state") is not a ref name
// git accepts.
func refuseRef(w http.ResponseWriter, ref string) bool {
	if hub.ValidRef(ref) {
		return false
	}
	fail(w, http.StatusBadRequest, fmt.Sprintf("%q is not a valid ref name", ref))
	return true
}

// refusePath answers 400 and returns true when p is not a file path git accepts in a tree.
func refusePath(w http.ResponseWriter, p string) bool {
	if hub.ValidPath(p) {
		return false
	}
	fail(w, http.StatusBadRequest, fmt.Sprintf("%q is not a valid path: it contains a malformed path component", p))
	return true
}

// refuseWorkflow answers 404, as GitHub does for a workflow it does not have, when file is
// not one file name of .github/workflows.
func refuseWorkflow(w http.ResponseWriter, file string) bool {
	if hub.ValidPath(file) && !strings.Contains(file, "/") {
		return false
	}
	fail(w, http.StatusNotFound, "Not Found")
	return true
}
