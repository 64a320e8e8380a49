package pte

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenFileErrors wants each failure to name the file once, in words.
func TestOpenFileErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pte")
	require.NoError(t, os.WriteFile(junk, []byte("definitely not a program"), 0o644))
	missing := filepath.Join(dir, "missing.pte")
	tests := []struct {
		name, path, want string
	}{
		{"missing", missing, "open " + missing + ": no such file or directory"},
		{"directory", dir, dir + " is a directory, not a .pte file"},
		{"not a program", junk, "read " + junk + `: not an ExecuTorch .pte file: file identifier is "nite", want "ET12"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenFile(tc.path)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), tc.path), "the path appears once")
		})
	}
	_, err := OpenFile(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// TestPathless reads a directory, whose read error names it, through pathless: the error
// keeps its cause and loses the path that OpenFile adds itself.
func TestPathless(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	_, raw := f.ReadAt(make([]byte, 8), 0)
	require.ErrorContains(t, raw, dir, "the os error names the path")
	_, err = pathless{f}.ReadAt(make([]byte, 8), 0)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), dir)
	assert.Equal(t, strings.TrimPrefix(raw.Error(), "read "+dir+": "), err.Error())
}

// openWithin runs open and fails the test if it has not returned within limit: a read
// that blocks on a pipe must show as a failure, not as a test that hangs.
func openWithin(t *testing.T, limit time.Duration, open func() (*Program, error)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := open()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("the open has not returned after %s: it blocks", limit)
		return nil
	}
}

// mkfifo makes a named pipe in a fresh folder. Cleanup opens it for writing, which ends an
// open for reading that blocks on it (as one without O_NONBLOCK does), so that a failing
// test leaves no goroutine behind.
func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.pte")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return p
}

// TestOpenFileRefusesNonRegular: a named pipe (whose open would wait for a writer) or a
// device is refused at once, the error naming the path and what it is; neither is opened.
func TestOpenFileRefusesNonRegular(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"named pipe", mkfifo(t), "is a named pipe, not a .pte file"},
		{"character device", os.DevNull, "is a character device, not a .pte file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opened := false
			o := opener{stat: os.Stat, open: func(name string) (*os.File, error) {
				opened = true
				return openNonBlocking(name)
			}}
			err := openWithin(t, 5*time.Second, func() (*Program, error) { return o.read(tc.path) })
			require.Error(t, err)
			assert.Equal(t, tc.path+" "+tc.want, err.Error())
			assert.False(t, opened, "the file was opened although its mode said it is no .pte")

			err = openWithin(t, 5*time.Second, func() (*Program, error) { return OpenFile(tc.path) })
			require.Error(t, err)
			assert.Equal(t, tc.path+" "+tc.want, err.Error())
		})
	}
}

// TestOpenFilePipeAfterTheCheck: a pipe that takes a regular file's place between the
// mode check and the open neither blocks the open nor gets read.
func TestOpenFilePipeAfterTheCheck(t *testing.T) {
	fifo := mkfifo(t)
	regularFile := filepath.Join(t.TempDir(), "real.pte")
	require.NoError(t, os.WriteFile(regularFile, []byte("ET12"), 0o644))
	o := opener{
		stat: func(string) (fs.FileInfo, error) { return os.Stat(regularFile) }, // the check saw a file
		open: openNonBlocking,
	}
	err := openWithin(t, 5*time.Second, func() (*Program, error) { return o.read(fifo) })
	require.Error(t, err)
	assert.Equal(t, fifo+" is a named pipe, not a .pte file", err.Error())
}
