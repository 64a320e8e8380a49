package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"time"
)

// Sentinel errors for errors.Is. Every failed Hub call returns an *Error whose Is method
// matches exactly one of these (and fs.ErrNotExist for a missing file), so callers branch on
// the kind of failure without parsing messages.
var (
	ErrGated               = errors.New("gated repo")
	ErrRepoNotFound        = errors.New("repo not found")
	ErrRevisionNotFound    = errors.New("revision not found")
	ErrEntryNotFound       = errors.New("file not found")
	ErrUnauthorized        = errors.New("invalid token")
	ErrForbidden           = errors.New("forbidden")
	ErrDisabled            = errors.New("repo disabled")
	ErrRateLimited         = errors.New("rate limited")
	ErrStaleParent         = errors.New("stale parent commit")
	ErrConflict            = errors.New("conflict")
	ErrBadRequest          = errors.New("bad request")
	ErrRangeNotSatisfiable = errors.New("range not satisfiable")
	ErrServer              = errors.New("hub server error")
)

// Error is a failed Hub call. Its message says what went wrong and what to do about it; it
// never contains the token (the request URL and headers it quotes carry none).
type Error struct {
	Kind       error  // one of the Err* sentinels
	Status     int    // HTTP status
	Method     string // request method
	URL        string // request URL (no credentials: the token travels only in a header)
	Repo       string // repo id, when known
	Revision   string // revision, when known
	Path       string // file path in the repo, when known
	Server     string // message the server gave (X-Error-Message or the JSON "error")
	RequestID  string // X-Request-Id (or a fallback id) to quote to Hugging Face
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("hub: %s %s: HTTP %d", e.Method, e.URL, e.Status)
	if e.Server != "" {
		msg += ": " + e.Server
	}
	if hint := e.hint(); hint != "" {
		msg += " (" + hint + ")"
	}
	if e.RequestID != "" {
		msg += " [request id " + e.RequestID + "]"
	}
	return msg
}

// hint is the "what to do" part of the message.
func (e *Error) hint() string {
	switch e.Kind {
	case ErrGated:
		return fmt.Sprintf("%s is gated: accept the license at %s with the HF_TOKEN account, then rerun; make sure HF_TOKEN is set", e.Repo, e.repoPage())
	case ErrRepoNotFound:
		return fmt.Sprintf("repo %s does not exist or is private: check the id, and set HF_TOKEN to an account that can read it", e.Repo)
	case ErrRevisionNotFound:
		return fmt.Sprintf("revision %q does not exist in %s: check the branch, tag or commit sha", e.Revision, e.Repo)
	case ErrEntryNotFound:
		return fmt.Sprintf("file %q is not in %s at revision %q", e.Path, e.Repo, e.Revision)
	case ErrUnauthorized:
		return "the token was rejected: set HF_TOKEN to a valid token (huggingface.co/settings/tokens)"
	case ErrForbidden:
		return "the token lacks permission: use a token with write access to this repo or its namespace"
	case ErrDisabled:
		return "the repo has been disabled by Hugging Face"
	case ErrRateLimited:
		return fmt.Sprintf("rate limited: retry after %s, or authenticate with HF_TOKEN for a higher quota", e.RetryAfter)
	case ErrStaleParent:
		return "the branch moved since its head was read: re-read the head sha and commit again"
	case ErrConflict:
		return "another operation conflicts: wait and retry"
	case ErrRangeNotSatisfiable:
		return "the requested byte range lies past the end of the file"
	case ErrServer:
		return "the Hub failed after retries: try again later"
	}
	return ""
}

// repoPage is the repo's web page on the Hub that answered (where the license is accepted).
func (e *Error) repoPage() string {
	if e.Repo == "" {
		return "the repo page"
	}
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host + "/" + e.Repo
	}
	return DefaultEndpoint + "/" + e.Repo
}

// Is matches the sentinel of e's kind; a missing file also matches fs.ErrNotExist, which is
// what model.Files promises its callers.
func (e *Error) Is(target error) bool {
	if target == e.Kind {
		return true
	}
	return target == fs.ErrNotExist && e.Kind == ErrEntryNotFound
}
