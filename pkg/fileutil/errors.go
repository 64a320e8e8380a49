// Package fileutil owns the file operations several packages share: hashing a file,
// putting a file in place, and wording a failed file operation as one sentence. It imports
// nothing from this module, so the Hub client, the report and the export can all use it.
package fileutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Error words a failed file operation as one sentence: "cannot create /out/xnnpack:
// permission denied". The *fs.PathError underneath already names the path and Go's own
// operation ("mkdir /out/xnnpack: …"); quoting it whole would say the path twice.
// errors.Is still sees the cause (fs.ErrNotExist, fs.ErrPermission).
func Error(op, path string, err error) error {
	return &fileError{op: op, path: path, err: err}
}

type fileError struct {
	op, path string
	err      error
}

func (e *fileError) Error() string {
	return fmt.Sprintf("cannot %s %s: %s", e.op, e.path, Reason(e.err))
}

func (e *fileError) Unwrap() error { return e.err }

// Reason is what went wrong in a file operation, without the operation and path that
// *fs.PathError, *os.LinkError and *os.SyscallError put in front of it.
func Reason(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	case errors.As(err, &se):
		return se.Err.Error()
	}
	return err.Error()
}
