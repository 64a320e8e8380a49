package hub

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPause: a context that has ended wins even over a wait of zero, whose timer is ready
// at once too (a select between the two would pick either, so it is tried many times).
func TestPause(t *testing.T) {
	assert.NoError(t, pause(context.Background(), 0))
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("publisher stopped")
	cancel(stop)
	for i := 0; i < 64; i++ {
		if err := pause(ctx, 0); !assert.ErrorIs(t, err, stop, "try %d", i) {
			break
		}
	}
	assert.ErrorIs(t, pause(ctx, time.Hour), stop)
}
