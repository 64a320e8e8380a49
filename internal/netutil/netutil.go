// Package netutil words a request that never reached its server as one sentence, as
// fileutil does for a failed file operation. Go's own text ("Get \"https://…\": dial tcp:
// lookup huggingface.co on 10.0.0.1:53: no such host") tells a user neither what failed
// nor what to do, and says the address twice. It imports nothing from this module, so the
// Hub client and the GitHub client can both use it.
package netutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
)

// UnreachableError is a connection that could not be made: the host name does not
// resolve, nothing listens on the port, or there is no route. Asking again at once rarely
// helps, so clients give it at most one retry; errors.Is still sees the cause
// (syscall.ECONNREFUSED, a *net.DNSError).
type UnreachableError struct {
	// Host is the host (and port, when the URL gave one) as the request's URL named it.
	Host string
	// Reason is what went wrong in a few words: "no such host", "connection refused".
	Reason string
	// Hint is what the user can check: "is the machine offline?".
	Hint string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s: %s (%s)", e.Host, e.Reason, e.Hint)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

const offline = "is the machine offline?"

// Unreachable returns err worded as an *UnreachableError when it is a failure to connect
// (the request never reached a server), and nil for anything else: an answer, a
// connection broken after it was made, a cancelled context.
func Unreachable(err error) *UnreachableError {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	var u *UnreachableError
	if errors.As(err, &u) {
		return u
	}
	var op *net.OpError
	var dns *net.DNSError
	if !(errors.As(err, &op) && op.Op == "dial") && !errors.As(err, &dns) {
		return nil
	}
	reason, hint := why(err)
	return &UnreachableError{Host: host(err), Reason: reason, Hint: hint, Err: err}
}

// why says what failed and what to check, without the "dial tcp 1.2.3.4:443:" prefix.
func why(err error) (reason, hint string) {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "no such host", offline
	case errors.As(err, &dns) && dns.IsTimeout:
		return "the host name lookup timed out", offline
	case errors.As(err, &dns):
		return "the host name lookup failed: " + dns.Err, offline
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", "nothing listens there: is the address right?"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network is unreachable", offline
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host", offline
	case errors.As(err, &op) && op.Timeout():
		return "no answer to the connection attempt", offline
	case errors.As(err, &op) && op.Err != nil:
		return op.Err.Error(), offline
	}
	return err.Error(), offline
}

// host is the host the request was for: the URL's (which keeps the name a dial error
// replaces by its address), else the name looked up, else the address dialled.
func host(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return u.Host
		}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.Name != "" {
		return dns.Name
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	return "the server"
}
