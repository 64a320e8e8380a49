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
			o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
			o.Host = func(dir string) (run.HostFacts, error) {
				return run.HostFacts{NProc: 4, MemTotalBytes: tc.mem, DiskFreeBytes: 100e9, DiskPath: dir}, nil
			}
			_, err := export.Run(context.Background(), o)
			if !tc.skip {
				assert.NoError(t, err)
				return
			}
			var skip *export.SkipError
			require.ErrorAs(t, err, &skip)
			assert.Equal(t, 4, export.ExitCode(err))
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
			o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
			o.Host = func(dir string) (run.HostFacts, error) {
				return run.HostFacts{NProc: 4, MemTotalBytes: 1 << 40, DiskFreeBytes: tc.free, DiskPath: dir}, nil
			}
			_, err := export.Run(context.Background(), o)
			if !tc.skip {
				assert.NoError(t, err)
				return
			}
			var skip *export.SkipError
			require.ErrorAs(t, err, &skip)
			assert.Contains(t, skip.Reason, "of disk")
		})
	}
}
