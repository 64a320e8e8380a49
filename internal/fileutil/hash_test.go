package fileutil

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomBytes is n reproducible, incompressible bytes.
func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// TestHash checks the streamed hash against published sha256 vectors and against hashing
// the same bytes whole, at sizes around the copy buffer's.
func TestHash(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string // empty: sha256 of data held whole
	}{
		{"empty", nil, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", []byte("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"one byte short of the buffer", randomBytes(bufSize-1, 1), ""},
		{"exactly the buffer", randomBytes(bufSize, 2), ""},
		{"three buffers and a bit", randomBytes(3*bufSize+17, 3), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = sum(tc.data)
			}
			path := writeFile(t, filepath.Join(t.TempDir(), "f.bin"), tc.data)
			d, err := Hash(path)
			require.NoError(t, err)
			assert.Equal(t, Digest{Bytes: int64(len(tc.data)), SHA256: want}, d)
		})
	}
}

// TestHashErrors wants each failure as one sentence naming the file once, with the cause
// still visible to errors.Is.
func TestHashErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pte")
	folder := filepath.Join(dir, "folder")
	require.NoError(t, os.Mkdir(folder, 0o755))
	tests := []struct {
		name, path, want string
		is               error
	}{
		{"missing file", missing, "cannot open " + missing + ": no such file or directory", fs.ErrNotExist},
		{"a folder", folder, "cannot hash " + folder + ": is a directory", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Hash(tc.path)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), tc.path))
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// TestHashContextStops: once its context ends, HashContext stops at the next buffer.
func TestHashContextStops(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(p, make([]byte, 3*bufSize), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := HashContext(ctx, p)
	require.ErrorIs(t, err, context.Canceled)
	d, err := HashContext(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, int64(3*bufSize), d.Bytes)
}
