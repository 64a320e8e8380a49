package watch_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/watch"
)

// TestUnreachableGitHubIsNotWaitedOn: with GitHub at a port nothing listens on, a queued
// model's dispatch is tried once, without the minute of waits meant for GitHub's 5xx
// answers, and fails in a sentence; the model stays pending for the next run.
func TestUnreachableGitHubIsNotWaitedOn(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	r.add("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	gh, err := watch.NewGitHub("http://"+closed, "experimentalmachines/exe-expo", "token", "main")
	require.NoError(t, err)
	r.w.Actions = gh

	sum := r.pass(state, watch.Options{})
	assert.Empty(t, r.sleeps, "waited between attempts on a GitHub that cannot be reached")
	require.Len(t, sum.Failed, 1)
	assert.Equal(t, "Qwen/Qwen3-0.6B -> xnnpack: dispatching export-xnnpack.yml for Qwen/Qwen3-0.6B failed: cannot reach "+
		closed+": connection refused (nothing listens there: is the address right?)", sum.Failed[0])
	assert.Equal(t, watch.Pending, state.Models["Qwen/Qwen3-0.6B"].Backends["xnnpack"].Status)
}
