package pte

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
