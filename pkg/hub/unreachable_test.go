package hub_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/netutil"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// TestUnreachableRetriedOnce: a request whose connection cannot be made (nothing listens,
// the name does not resolve) is sent twice, not six times, and fails with the sentence
// that names the host. The waits are a millisecond, so the count is what is checked.
func TestUnreachableRetriedOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	tests := []struct {
		name, endpoint, want string
		cause                error
	}{
		{"connection refused", "http://" + closed, "cannot reach " + closed + ": connection refused (nothing listens there: is the address right?)", syscall.ECONNREFUSED},
		{"no such host", "http://hub.exe-expo.invalid", "cannot reach hub.exe-expo.invalid: no such host (is the machine offline?)", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dials atomic.Int32
			tr := http.DefaultTransport.(*http.Transport).Clone()
			d := &net.Dialer{}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return d.DialContext(ctx, network, addr)
			}
			c := hub.New(hub.Options{Endpoint: tc.endpoint, NoEnvToken: true, HTTPClient: &http.Client{Transport: tr},
				RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
			_, err := c.ModelInfo(t.Context(), "org/model", hub.InfoOptions{})
			var u *netutil.UnreachableError
			require.ErrorAs(t, err, &u)
			assert.Equal(t, tc.want, err.Error())
			if tc.cause != nil {
				assert.ErrorIs(t, err, tc.cause)
			}
			assert.Equal(t, int32(2), dials.Load(), "one attempt and one retry")
		})
	}
}
