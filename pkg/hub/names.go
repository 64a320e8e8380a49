package hub

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// ErrInvalidName matches every repo id, revision or path a Client refuses before sending
// anything: a name the Hub would refuse, or one that could leave its URL segment ("../X",
// "a/b?c", "a%2fb"). No request is made, so it is never an *Error.
var ErrInvalidName = errors.New("invalid name")

// The rules in words, for the messages that refuse a name.
const (
	// RefRule is what ValidRef accepts.
	RefRule = "a git branch, tag or revision name: no '..', '@{', '//', space, control character or any of ~^:?*[\\, " +
		"no part starting with '.' or ending in '.lock', not starting with '-' or '/', not ending in '/' or '.', not '@', " +
		"each part at most 255 bytes"
	// PathRule is what ValidPath accepts.
	PathRule = "a file path in a repo: relative, '/'-separated, no empty, '.', '..' or '.git' part, no control character"
)

// maxRefPart bounds one '/'-separated part of a ref: git keeps loose refs as files, and
// file systems refuse longer names.
const maxRefPart = 255

// ValidRef reports whether name is a branch, tag or revision name by git's own rules
// (git check-ref-format, applied with --allow-onelevel and --branch's ban on a leading
// '-'), which the Hub and GitHub both enforce; a commit sha and the Hub's refs/pr/N pass.
// Revisions reach URL segments, so one git would refuse is never sent: it could only be a
// mistake, or an attempt to reach another URL.
func ValidRef(name string) bool {
	if name == "" || name == "@" || !utf8.ValidString(name) || strings.HasPrefix(name, "-") ||
		strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") {
		return false
	}
	for _, bad := range []string{"..", "@{", "//"} {
		if strings.Contains(name, bad) {
			return false
		}
	}
	if strings.ContainsFunc(name, badRefRune) {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") || len(part) > maxRefPart {
			return false
		}
	}
	return true
}

// badRefRune is a character git refuses anywhere in a ref name.
func badRefRune(r rune) bool {
	return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r)
}

// ValidPath reports whether p is a file path in a repo that the Hub accepts: relative,
// '/'-separated, with no empty, '.' or '..' part (huggingface_hub refuses those and any
// part named .git) and no control character. A path reaches the resolve URL segment by
// segment and commit bodies as is, so one that could name a file outside the repo, or
// another file than it reads as, is refused before it is sent.
func ValidPath(p string) bool {
	if p == "" || !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || part == ".git" {
			return false
		}
	}
	return true
}

// nameError is a name refused before any request: what it is, the value and the rule.
type nameError struct {
	op, field, value, rule string
}

func (e *nameError) Error() string {
	return fmt.Sprintf("hub: %s: %s %q is not %s", e.op, e.field, e.value, e.rule)
}

// Is makes every refused name match ErrInvalidName.
func (e *nameError) Is(target error) bool { return target == ErrInvalidName }

// checkRepo refuses a repo id the Hub would refuse (model.ValidID).
func checkRepo(op, repo string) error {
	if model.ValidID(repo) {
		return nil
	}
	return &nameError{op: op, field: "repo", value: repo, rule: "a Hub repo id (" + model.IDRule + ")"}
}

// checkRev refuses a revision git would refuse; empty is the default branch.
func checkRev(op, rev string) error {
	if rev == "" || ValidRef(rev) {
		return nil
	}
	return &nameError{op: op, field: "revision", value: rev, rule: RefRule}
}

// checkPath refuses a file path the Hub would refuse.
func checkPath(op, p string) error {
	if ValidPath(p) {
		return nil
	}
	return &nameError{op: op, field: "path", value: p, rule: PathRule}
}

// checkFile checks the three names of a file request, in the order they appear in its URL.
func checkFile(op, repo, rev, path string) error {
	return firstErr(checkRepo(op, repo), checkRev(op, rev), checkPath(op, path))
}

// firstErr is the first non-nil error, so that one message names one problem.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// escapeRepo escapes the two parts of a repo id, keeping the slash between them as a
// separator.
func escapeRepo(repo string) string {
	ns, name, _ := strings.Cut(repo, "/")
	return url.PathEscape(ns) + "/" + url.PathEscape(name)
}

// escapeSegments escapes each segment on its own, so that no value adds a segment, a
// query or a fragment.
func escapeSegments(segs []string) string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = url.PathEscape(s)
	}
	return strings.Join(out, "/")
}
