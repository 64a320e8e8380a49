package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// probe dials the endpoint once, so that a Hub this host cannot reach is one short
// *UnreachableError at once rather than the client's retries (about 23 s) ending in a
// message that quotes the request URL twice.
func (h Hub) probe(ctx context.Context) error {
	endpoint := h.Client.Endpoint()
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the Hub endpoint %q (HF_ENDPOINT) is not a URL such as https://huggingface.co", endpoint)
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	t := h.ProbeTimeout
	if t == 0 {
		t = 3 * time.Second
	}
	dial := h.Dial
	if dial == nil {
		d := net.Dialer{Timeout: t}
		dial = d.DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	conn, err := dial(dctx, "tcp", host)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &UnreachableError{Endpoint: endpoint, Reason: dialReason(err, t)}
	}
	conn.Close()
	return nil
}

// dialReason says in a few words why a dial failed, without the "dial tcp 1.2.3.4:443:"
// prefix that repeats the address.
func dialReason(err error, timeout time.Duration) string {
	var dns *net.DNSError
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "its host name does not resolve"
	case errors.As(err, &dns):
		return "the host name lookup failed: " + dns.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.As(err, &op) && op.Err != nil:
		return op.Err.Error()
	}
	return err.Error()
}
