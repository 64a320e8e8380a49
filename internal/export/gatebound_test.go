package export_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// TestMemoryGateExactBound holds the exit-4 memory skip to its bound: a host whose RAM +
// swap − reserve is exactly the plan's host need builds the window, one byte less skips it.
// A looser bound (any margin over the need) fails the second case.
func TestMemoryGateExactBound(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	need := res.Report.Estimates.HostNeedBytes
	require.Positive(t, need)
	reserve := o.Config.Export.HostReserveBytes
	for _, tc := range []struct {
		name string
		mem  int64
		skip bool
	}{
		{"budget equals the need", need + reserve, false},
		{"budget one byte short", need + reserve - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runOnHost(t, tc.mem, 100e9)
			if skipped(t, err, tc.skip) {
				assert.Equal(t, 4, export.ExitCode(err))
			}
		})
	}
}

// TestDiskGateExactBound holds the disk skip to its bound: a work folder with exactly the
// plan's disk need plus the backend's spare margin free builds the window, one byte less
// skips it.
func TestDiskGateExactBound(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	need := res.Report.Estimates.DiskNeedBytes + backend.ByName("xnnpack").Gate.DiskMargin
	require.Positive(t, need)
	for _, tc := range []struct {
		name string
		free int64
		skip bool
	}{
		{"free space equals the need", need, false},
		{"free space one byte short", need - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runOnHost(t, 1<<40, tc.free)
			if skipped(t, err, tc.skip) {
				var skip *export.SkipError
				require.ErrorAs(t, err, &skip)
				assert.Contains(t, skip.Reason, "of disk")
			}
		})
	}
}

// runOnHost exports Qwen/Qwen3-1.7B's XNNPACK 2k window on a host with mem bytes of RAM
// and free bytes of disk.
func runOnHost(t *testing.T, mem, free int64) error {
	t.Helper()
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
	o.Host = func(dir string) (run.HostFacts, error) {
		return run.HostFacts{NProc: 4, MemTotalBytes: mem, DiskFreeBytes: free, DiskPath: dir}, nil
	}
	_, err := export.Run(context.Background(), o)
	return err
}

// skipped requires err to be a skip (an *export.SkipError) when want is true and no error
// otherwise, and says whether it was a skip.
func skipped(t *testing.T, err error, want bool) bool {
	t.Helper()
	if !want {
		assert.NoError(t, err)
		return false
	}
	var skip *export.SkipError
	require.ErrorAs(t, err, &skip)
	return true
}
