package source_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// countingTransport fails every request and counts it: a test that expects the Hub not to
// be asked at all asserts a count of zero.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("countingTransport: no request was expected")
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	return addr
}

// TestUnreachableHubFailsAtOnce: when the Hub refuses the probe's dial, Source and Fetch
// answer one short sentence that names the endpoint once, and the client sends no request
// (so none of its ~23 s of retries can happen).
func TestUnreachableHubFailsAtOnce(t *testing.T) {
	endpoint := "http://" + closedPort(t)
	rt := &countingTransport{}
	h := source.Hub{Client: hub.New(hub.Options{Endpoint: endpoint, NoEnvToken: true, HTTPClient: &http.Client{Transport: rt}})}
	want := "the Hugging Face Hub at " + endpoint + " could not be reached (connection refused)"

	_, _, err := h.Source(context.Background(), "Qwen/Qwen3-0.6B", "main")
	require.ErrorIs(t, err, source.ErrUnreachable)
	assert.Equal(t, want, err.Error())

	_, err = h.Fetch(context.Background(), "Qwen/Qwen3-0.6B", "main", t.TempDir(), true)
	require.ErrorIs(t, err, source.ErrUnreachable)
	assert.Equal(t, want, err.Error())
	assert.Zero(t, rt.n.Load(), "the client was asked despite the failed probe")
}

// TestProbeReasons words each way a dial fails in a few words, with the host named once.
func TestProbeReasons(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		reason string
	}{
		{"name does not resolve", opError(&net.DNSError{Err: "no such host", Name: "huggingface.co", IsNotFound: true}), "its host name does not resolve"},
		{"resolver down", opError(&net.DNSError{Err: "server misbehaving", Name: "huggingface.co", Server: "10.0.0.1:53"}), "the host name lookup failed: server misbehaving"},
		{"connection refused", opError(syscall.ECONNREFUSED), "connection refused"},
		{"no answer", opError(context.DeadlineExceeded), "no answer within 3s"},
		{"no route", opError(syscall.EHOSTUNREACH), "no route to host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &countingTransport{}
			var dialed string
			h := source.Hub{
				Client: hub.New(hub.Options{Endpoint: "https://huggingface.co", NoEnvToken: true, HTTPClient: &http.Client{Transport: rt}}),
				Dial: func(_ context.Context, network, addr string) (net.Conn, error) {
					dialed = network + " " + addr
					return nil, tc.err
				},
			}
			_, err := h.Fetch(context.Background(), "Qwen/Qwen3-0.6B", "main", t.TempDir(), true)
			require.ErrorIs(t, err, source.ErrUnreachable)
			assert.Equal(t, "tcp huggingface.co:443", dialed)
			assert.Equal(t, "the Hugging Face Hub at https://huggingface.co could not be reached ("+tc.reason+")", err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), "huggingface.co"))
			assert.Zero(t, rt.n.Load())
		})
	}
}

// TestProbeCancelled: a cancelled context is the caller's doing, not an unreachable Hub.
func TestProbeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := source.Hub{
		Client: hub.New(hub.Options{Endpoint: "https://huggingface.co", NoEnvToken: true}),
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return nil, opError(ctx.Err())
		},
	}
	_, err := h.Fetch(ctx, "Qwen/Qwen3-0.6B", "main", t.TempDir(), true)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, source.ErrUnreachable)
}

func opError(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }

// TestOffline refuses every Hub model with the sentence, without a client to dial with.
func TestOffline(t *testing.T) {
	o := source.Offline{Why: "EXE_EXPO_OFFLINE=1"}
	want := "Qwen/Qwen3-0.6B is a Hub id and EXE_EXPO_OFFLINE=1 keeps exe-expo off the Hub: give a local model folder instead"
	_, _, err := o.Source(context.Background(), "Qwen/Qwen3-0.6B", "main")
	require.Error(t, err)
	assert.Equal(t, want, err.Error())
	_, err = o.Fetch(context.Background(), "Qwen/Qwen3-0.6B", "main", t.TempDir(), true)
	require.Error(t, err)
	assert.Equal(t, want, err.Error())
}

// TestDroppedConnectionsQuoteTheURLOnce: a Hub that takes the probe's connection but
// drops every request fails after the client's retries with the request URL said once
// (the transport's *url.Error would quote it a second time).
func TestDroppedConnectionsQuoteTheURLOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	endpoint := "http://" + l.Addr().String()
	h := source.Hub{Client: hub.New(hub.Options{Endpoint: endpoint, NoEnvToken: true, RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})}
	_, err = h.Fetch(context.Background(), "Qwen/Qwen3-0.6B", "main", t.TempDir(), true)
	require.Error(t, err)
	assert.NotErrorIs(t, err, source.ErrUnreachable, "the probe's dial succeeded")
	msg := err.Error()
	assert.Equal(t, 1, strings.Count(msg, endpoint), "%q", msg)
	assert.Contains(t, msg, "no answer after 2 attempts: ") // then EOF or a reset, as the close races the request
}
