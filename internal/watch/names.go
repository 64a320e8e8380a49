package watch

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// GitHub names are checked before any request (docs/research/hub.md#names-checked-before-any-request):
// go-github puts the owner, the repository and a workflow file into its URLs unescaped, so a
// name GitHub would refuse could also reach another URL than the one meant.

// The rules in words, for the messages that refuse a name.
const (
	// OwnerRule is what ValidOwner accepts.
	OwnerRule = "1-39 letters, digits and single hyphens, not starting or ending with a hyphen"
	// RepoNameRule is what ValidRepoName accepts.
	RepoNameRule = "1-100 letters, digits, '.', '_' and '-', not '.' or '..', not ending in '.git' or '.wiki'"
	// GitHubRepoRule is what ParseRepo accepts, after "owner/name".
	GitHubRepoRule = "the owner " + OwnerRule + "; the name " + RepoNameRule
)

var (
	ownerRe    = regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`)
	repoNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	workflowRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$`)
)

// ErrInvalidName matches every GitHub name refused before a request, so that a caller can
// tell a mistake in its own input from an answer of GitHub's.
var ErrInvalidName = errors.New("invalid GitHub name")

// nameError is a GitHub name refused before any request.
type nameError struct{ msg string }

func (e *nameError) Error() string { return e.msg }

// Is makes every refused name match ErrInvalidName.
func (e *nameError) Is(target error) bool { return target == ErrInvalidName }

// invalid is a refusal of a name, worded by format.
func invalid(format string, args ...any) error {
	return &nameError{msg: fmt.Sprintf(format, args...)}
}

// ValidOwner reports whether s is a GitHub user or organization name by GitHub's rules:
// letters, digits and single hyphens, 1-39 characters, no hyphen first or last.
func ValidOwner(s string) bool { return len(s) <= 39 && ownerRe.MatchString(s) }

// ValidRepoName reports whether s is a GitHub repository name: ASCII letters, digits, '.',
// '_' and '-', 1-100 characters; "." and ".." are not names, and GitHub strips ".git" and
// refuses ".wiki" at the end.
func ValidRepoName(s string) bool {
	return repoNameRe.MatchString(s) && s != "." && s != ".." &&
		!strings.HasSuffix(s, ".git") && !strings.HasSuffix(s, ".wiki")
}

// ParseRepo splits "owner/name" and checks both parts; field names where the value came
// from ("--repo", "GITHUB_REPOSITORY") in the error.
func ParseRepo(field, s string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || !ValidOwner(owner) || !ValidRepoName(name) {
		return "", "", invalid("%s %q is not owner/name (%s)", field, s, GitHubRepoRule)
	}
	return owner, name, nil
}

// CheckBranch is nil for a branch name git and GitHub accept (hub.ValidRef), else an error
// naming field and value.
func CheckBranch(field, branch string) error {
	if hub.ValidRef(branch) {
		return nil
	}
	return invalid("%s %q is not a branch name (%s)", field, branch, hub.RefRule)
}

// CheckStatePath is nil for a file path in the repository that GitHub's contents API can
// read (hub.ValidPath: relative, no empty, '.', '..' or '.git' part), else an error naming
// field and value.
func CheckStatePath(field, p string) error {
	if hub.ValidPath(p) {
		return nil
	}
	return invalid("%s %q is not a file path in the repository (%s)", field, p, hub.PathRule)
}

// checkWorkflow refuses a workflow that is not a plain .yml or .yaml file name of
// .github/workflows (the watcher dispatches export-<backend>.yml); the name goes into the
// URL as one segment.
func checkWorkflow(file string) error {
	if workflowRe.MatchString(file) {
		return nil
	}
	return invalid("workflow %q is not a workflow file name (letters, digits, '.', '_', '-', ending in .yml or .yaml)", file)
}

// check refuses a GitHub whose owner or repository was set to a name GitHub would refuse
// (NewGitHub checks them; a GitHub built by hand is checked on each call).
func (g *GitHub) check() error {
	if !ValidOwner(g.Owner) || !ValidRepoName(g.Repo) {
		return invalid("the GitHub repository %q is not owner/name (%s)", g.Owner+"/"+g.Repo, GitHubRepoRule)
	}
	return nil
}

// escaped is a name as one URL path segment, for the go-github calls that do not escape.
func escaped(s string) string { return url.PathEscape(s) }
