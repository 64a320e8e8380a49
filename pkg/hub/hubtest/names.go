package hubtest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// The local Hub refuses every repo id, revision and file path the Hub refuses, with a 400
// and a JSON error (docs/research/hub.md#names-checked-before-any-request). Where the Hub
// would answer 404 for a revision no branch can have, hubtest answers 400 too: a client
// that sent such a name has a bug, and a 404 would let it pass as "not found".

// refuseRepo answers 400 and returns true when id is not a repo id the Hub accepts.
func refuseRepo(w http.ResponseWriter, id string) bool {
	if model.ValidID(id) {
		return false
	}
	writeError(w, http.StatusBadRequest, "", fmt.Sprintf("Invalid repo id %q: %s", id, model.IDRule))
	return true
}

// refuseRev answers 400 and returns true when rev is not a ref name git accepts.
func refuseRev(w http.ResponseWriter, rev string) bool {
	if hub.ValidRef(rev) {
		return false
	}
	writeError(w, http.StatusBadRequest, "", fmt.Sprintf("Invalid rev id %q: not %s", rev, hub.RefRule))
	return true
}

// refusePath answers 400 and returns true when p is not a file path the Hub accepts.
func refusePath(w http.ResponseWriter, p string) bool {
	if badPath(p) == "" {
		return false
	}
	writeError(w, http.StatusBadRequest, "", badPath(p))
	return true
}

// refuseModelNames answers 400 and returns true when a model API path holds a bad repo id,
// revision (the segment after a verb that takes one) or tree path.
func refuseModelNames(w http.ResponseWriter, id string, rest []string) bool {
	if refuseRepo(w, id) {
		return true
	}
	if len(rest) < 2 {
		return false
	}
	switch rest[0] {
	case "revision", "tree", "preupload", "commit", "commits":
		if refuseRev(w, rest[1]) {
			return true
		}
	}
	return rest[0] == "tree" && len(rest) > 2 && refusePath(w, strings.Join(rest[2:], "/"))
}

// badPath is why p is not a file path the Hub accepts, or "" when it is. A trailing '/'
// (a folder, in deletions and tree listings) is allowed.
func badPath(p string) string {
	if hub.ValidPath(strings.TrimSuffix(p, "/")) {
		return ""
	}
	return fmt.Sprintf("Invalid path %q: not %s", p, hub.PathRule)
}
