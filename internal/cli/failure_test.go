package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// TestEnd: how a command's returned error becomes the exit code, the stderr line and the
// result's reason, in the one place that decides them.
func TestEnd(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, ExitOK, ""},
		{"a failure", failf(ExitFailed, "plan: %w", fs.ErrNotExist), ExitFailed, "plan: file does not exist"},
		{"a verdict with its own code", failf(ExitNotEligible, "plan: not eligible"), ExitNotEligible, "plan: not eligible"},
		{"an error that is no Failure", errors.New("costs: broken"), ExitFailed, "costs: broken"},
		{"a wrapped Failure", fmt.Errorf("window 2: %w", failf(ExitSkipped, "skipped")), ExitSkipped, "window 2: skipped"},
		{"a quiet Failure", &Failure{Code: ExitFailed}, ExitFailed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			env := Env{Stderr: &stderr, res: result.New("plan")}
			assert.Equal(t, tc.code, env.end(tc.err))
			assert.Equal(t, tc.stderr, strings.TrimSuffix(stderr.String(), "\n"))
			assert.Equal(t, tc.stderr, env.res.Reason)
		})
	}
	assert.ErrorIs(t, failf(ExitFailed, "plan: %w", fs.ErrNotExist), fs.ErrNotExist, "a Failure keeps the error it words")
}
