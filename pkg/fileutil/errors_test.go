package fileutil

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestError checks that the wrappers Go's os package puts around a cause are dropped, so
// the path is said once, and that errors.Is still sees the cause.
func TestError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"path error", &fs.PathError{Op: "open", Path: "/m/a.pte", Err: syscall.ENOENT},
			"cannot open /m/a.pte: no such file or directory"},
		{"link error", &os.LinkError{Op: "rename", Old: "/m/a.part", New: "/m/a.pte", Err: syscall.EXDEV},
			"cannot open /m/a.pte: invalid cross-device link"},
		{"syscall error", os.NewSyscallError("fsync", syscall.EIO),
			"cannot open /m/a.pte: input/output error"},
		{"plain error", errors.New("short write"),
			"cannot open /m/a.pte: short write"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Error("open", "/m/a.pte", tc.err)
			assert.Equal(t, tc.want, err.Error())
			assert.ErrorIs(t, err, tc.err)
		})
	}
}
