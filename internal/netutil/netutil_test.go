package netutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timeout is a net.Error that timed out, as a dial past its deadline returns.
type timeout struct{}

func (timeout) Error() string   { return "i/o timeout" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return true }

func dial(addr string, err error) *net.OpError {
	op := &net.OpError{Op: "dial", Net: "tcp", Err: err}
	if addr != "" {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		op.Addr = a
	}
	return op
}

func get(rawURL string, err error) error { return &url.Error{Op: "Get", URL: rawURL, Err: err} }

// TestUnreachable words each way a connection cannot be made, naming the host the URL
// gave, and leaves every other error alone.
func TestUnreachable(t *testing.T) {
	notFound := &net.DNSError{Err: "no such host", Name: "huggingface.co", Server: "10.0.0.1:53", IsNotFound: true}
	tests := []struct {
		name string
		err  error
		want string // "" when err is no failure to connect
	}{
		{"no such host", get("https://huggingface.co/api/models", dial("", notFound)),
			"cannot reach huggingface.co: no such host (is the machine offline?)"},
		{"lookup timed out", get("https://api.github.com/repos", dial("", &net.DNSError{Err: "i/o timeout", Name: "api.github.com", IsTimeout: true})),
			"cannot reach api.github.com: the host name lookup timed out (is the machine offline?)"},
		{"lookup failed", get("https://huggingface.co/x", dial("", &net.DNSError{Err: "server misbehaving", Name: "huggingface.co", IsTemporary: true})),
			"cannot reach huggingface.co: the host name lookup failed: server misbehaving (is the machine offline?)"},
		{"refused", get("http://127.0.0.1:1/api", dial("127.0.0.1:1", os.NewSyscallError("connect", syscall.ECONNREFUSED))),
			"cannot reach 127.0.0.1:1: connection refused (nothing listens there: is the address right?)"},
		{"no network", get("https://huggingface.co/x", dial("10.1.2.3:443", os.NewSyscallError("connect", syscall.ENETUNREACH))),
			"cannot reach huggingface.co: network is unreachable (is the machine offline?)"},
		{"no route", get("https://huggingface.co/x", dial("10.1.2.3:443", os.NewSyscallError("connect", syscall.EHOSTUNREACH))),
			"cannot reach huggingface.co: no route to host (is the machine offline?)"},
		{"dial timed out", get("https://huggingface.co/x", dial("10.1.2.3:443", timeout{})),
			"cannot reach huggingface.co: no answer to the connection attempt (is the machine offline?)"},
		{"no URL: the address dialled", dial("127.0.0.1:1", os.NewSyscallError("connect", syscall.ECONNREFUSED)),
			"cannot reach 127.0.0.1:1: connection refused (nothing listens there: is the address right?)"},
		{"no URL: the name looked up", notFound, "cannot reach huggingface.co: no such host (is the machine offline?)"},
		{"wrapped again", fmt.Errorf("listing: %w", get("https://huggingface.co/x", dial("", notFound))),
			"cannot reach huggingface.co: no such host (is the machine offline?)"},

		{"nil", nil, ""},
		{"cancelled", get("https://huggingface.co/x", context.Canceled), ""},
		{"cancelled while dialling", get("https://huggingface.co/x", dial("", context.Canceled)), ""},
		{"reset after connecting", get("https://huggingface.co/x", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), ""},
		{"answer cut short", get("https://huggingface.co/x", io.ErrUnexpectedEOF), ""},
		{"not a network error", errors.New("disk full"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := Unreachable(tc.err)
			if tc.want == "" {
				assert.Nil(t, u)
				return
			}
			require.NotNil(t, u)
			assert.Equal(t, tc.want, u.Error())
			assert.ErrorIs(t, u, tc.err, "the cause stays visible to errors.Is")
			assert.Same(t, u, Unreachable(u), "an UnreachableError is worded once")
		})
	}
}
