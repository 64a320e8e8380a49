package fileutil

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchSize is a small model's .pte: large enough that the page cache, not the test's
// setup, is what the numbers measure against.
const benchSize = 256 << 20

// bigFile writes benchSize incompressible bytes to dir, streamed.
func bigFile(b *testing.B, dir string) string {
	b.Helper()
	path := filepath.Join(dir, "big.pte")
	f, err := os.Create(path)
	require.NoError(b, err)
	w := bufio.NewWriterSize(f, 4<<20)
	r := rand.NewChaCha8([32]byte{4})
	buf := make([]byte, 4<<20)
	for left := benchSize; left > 0; left -= len(buf) {
		_, _ = r.Read(buf)
		_, err := w.Write(buf[:min(len(buf), left)])
		require.NoError(b, err)
	}
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())
	return path
}

// BenchmarkHash reads a 256 MiB file through sha256.
//
//	go test -run '^$' -bench . -benchtime 5x ./internal/fileutil
func BenchmarkHash(b *testing.B) {
	path := bigFile(b, b.TempDir())
	b.SetBytes(benchSize)
	b.ResetTimer()
	for range b.N {
		d, err := Hash(path)
		require.NoError(b, err)
		require.Equal(b, int64(benchSize), d.Bytes)
	}
}

// BenchmarkPlace copies a 256 MiB file, hashing it on the way, as Copy and as a Move
// across file systems do; and moves it on one file system (a rename, then one hash).
func BenchmarkPlace(b *testing.B) {
	exdev := func(oldpath, newpath string) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EXDEV}
	}
	cases := []struct {
		name   string
		how    How
		rename func(oldpath, newpath string) error
	}{
		{"copy", Copy, os.Rename},
		{"move-across-file-systems", Move, exdev},
		{"move-rename", Move, os.Rename},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			src, dst := bigFile(b, dir), filepath.Join(dir, "out", "big.pte")
			p := placer{rename: c.rename, open: openFile}
			b.SetBytes(benchSize)
			b.ResetTimer()
			for range b.N {
				d, err := p.place(src, dst, c.how)
				require.NoError(b, err)
				require.Equal(b, int64(benchSize), d.Bytes)
				if c.how == Move {
					b.StopTimer()
					require.NoError(b, os.Rename(dst, src)) // put it back for the next round
					b.StartTimer()
				}
			}
		})
	}
}
