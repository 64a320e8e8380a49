package hub

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// mapError turns an error response into an *Error, checking X-Error-Code before the status
// as huggingface_hub's hf_raise_for_status does (docs/research/hub.md#error-mapping).
func mapError(resp *http.Response, cl call) *Error {
	e := &Error{
		Status: resp.StatusCode, Method: cl.method, URL: redact(cl.url),
		Repo: cl.repo, Revision: cl.revision, Path: cl.path,
		Server:    serverMessage(resp),
		RequestID: requestID(resp.Header),
	}
	code := resp.Header.Get("X-Error-Code")
	switch {
	case code == "RevisionNotFound":
		e.Kind = ErrRevisionNotFound
	case code == "EntryNotFound":
		e.Kind = ErrEntryNotFound
	case code == "GatedRepo":
		e.Kind = ErrGated
	case resp.Header.Get("X-Error-Message") == "Access to this resource is disabled.":
		e.Kind = ErrDisabled
	case code == "RepoNotFound":
		e.Kind = ErrRepoNotFound
	case resp.StatusCode == http.StatusUnauthorized && isBadToken(e.Server):
		e.Kind = ErrUnauthorized
	case resp.StatusCode == http.StatusUnauthorized && cl.repo != "" && !strings.HasSuffix(cl.url, "/api/repos/create"):
		// The Hub answers 401 both for a missing repo and a private one.
		e.Kind = ErrRepoNotFound
	case resp.StatusCode == http.StatusUnauthorized:
		e.Kind = ErrUnauthorized
	case resp.StatusCode == http.StatusNotFound && cl.repo != "" && cl.path != "":
		e.Kind = ErrEntryNotFound
	case resp.StatusCode == http.StatusNotFound:
		e.Kind = ErrRepoNotFound
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
		e.RetryAfter, _ = serverWait(resp.Header)
	case resp.StatusCode == http.StatusPreconditionFailed:
		e.Kind = ErrStaleParent
	case resp.StatusCode == http.StatusConflict:
		e.Kind = ErrConflict
	case resp.StatusCode == http.StatusForbidden:
		e.Kind = ErrForbidden
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		e.Kind = ErrRangeNotSatisfiable
	case resp.StatusCode >= 500:
		e.Kind = ErrServer
	default:
		e.Kind = ErrBadRequest
	}
	return e
}

func isBadToken(msg string) bool {
	return strings.Contains(msg, "Invalid credentials in Authorization header") ||
		strings.Contains(msg, "Invalid username or password")
}

// requestID is the id to quote to Hugging Face support, in the Python client's order.
func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "X-Amzn-Trace-Id", "X-Amz-Cf-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// serverMessage reads the server's explanation: X-Error-Message, else the JSON body's
// "error" (a string or a list) and "error_description", else a short plain-text body.
func serverMessage(resp *http.Response) string {
	if m := resp.Header.Get("X-Error-Message"); m != "" {
		return m
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var j struct {
		Error       json.RawMessage `json:"error"`
		Description string          `json:"error_description"`
		Message     string          `json:"message"`
	}
	if json.Unmarshal(body, &j) == nil {
		var parts []string
		var s string
		var list []string
		switch {
		case json.Unmarshal(j.Error, &s) == nil && s != "":
			parts = append(parts, s)
		case json.Unmarshal(j.Error, &list) == nil:
			parts = append(parts, strings.Join(list, "; "))
		}
		if j.Description != "" {
			parts = append(parts, j.Description)
		}
		if len(parts) == 0 && j.Message != "" {
			parts = append(parts, j.Message)
		}
		if len(parts) > 0 {
			return strings.Join(parts, ": ")
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 || strings.ContainsAny(s, "<>") {
		return ""
	}
	return s
}
