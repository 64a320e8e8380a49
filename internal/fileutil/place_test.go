package fileutil

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renamer stands in for os.Rename of src onto dst: it records each call and, when fail is
// set, fails the way a rename across file systems does.
type renamer struct {
	calls []string
	fail  error
}

func (r *renamer) rename(oldpath, newpath string) error {
	r.calls = append(r.calls, oldpath)
	if r.fail != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: r.fail}
	}
	return os.Rename(oldpath, newpath)
}

// newFileMode is the mode a file created in dir gets (0666 less the umask), which is what
// a copy must give dst.
func newFileMode(t *testing.T, dir string) fs.FileMode {
	t.Helper()
	path := filepath.Join(dir, "new-file-mode")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(path))
	return st.Mode()
}

// TestPlace covers the three ways a file reaches dst: a rename on one file system, a copy
// when the rename fails as across file systems, and a copy that keeps the source.
func TestPlace(t *testing.T) {
	data := randomBytes(2*bufSize+123, 7)
	tests := []struct {
		name         string
		how          How
		renameFails  error
		wantRenamed  bool // dst is src's inode
		wantSrcStays bool
		wantRenames  int
	}{
		{"move on one file system renames", Move, nil, true, false, 1},
		{"move across file systems copies and removes the source", Move, syscall.EXDEV, false, false, 1},
		{"copy keeps the source and never renames it", Copy, nil, false, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := writeFile(t, filepath.Join(dir, "tool", "out.pte"), data)
			require.NoError(t, os.Chmod(src, 0o600))
			before, err := os.Stat(src)
			require.NoError(t, err)
			dst := filepath.Join(dir, "out", "xnnpack", "a.pte")
			r := &renamer{fail: tc.renameFails}

			d, err := placer{rename: r.rename, open: openFile}.place(src, dst, tc.how)
			require.NoError(t, err)

			assert.Equal(t, Digest{Bytes: int64(len(data)), SHA256: sum(data)}, d)
			got, err := os.ReadFile(dst)
			require.NoError(t, err)
			assert.True(t, string(got) == string(data), "dst holds other bytes than src had")
			assert.Len(t, r.calls, tc.wantRenames)
			st, err := os.Stat(dst)
			require.NoError(t, err)
			assert.Equal(t, tc.wantRenamed, os.SameFile(before, st), "dst is src's inode")
			if tc.wantRenamed {
				assert.Equal(t, fs.FileMode(0o600), st.Mode(), "a rename keeps src's mode")
			} else {
				assert.Equal(t, newFileMode(t, filepath.Dir(dst)), st.Mode(), "a copy gets a new file's mode")
			}
			_, err = os.Stat(src)
			if tc.wantSrcStays {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, fs.ErrNotExist)
			}
			assert.NoFileExists(t, dst+".part")
		})
	}
}

// TestPlaceOverwrites replaces an older dst, as a rerun of an export does.
func TestPlaceOverwrites(t *testing.T) {
	for _, how := range []How{Move, Copy} {
		dir := t.TempDir()
		src := writeFile(t, filepath.Join(dir, "in", "a.pte"), []byte("new"))
		dst := writeFile(t, filepath.Join(dir, "out", "a.pte"), []byte("older and longer"))
		d, err := Place(src, dst, how)
		require.NoError(t, err)
		assert.Equal(t, Digest{Bytes: 3, SHA256: sum([]byte("new"))}, d)
		got, err := os.ReadFile(dst)
		require.NoError(t, err)
		assert.Equal(t, "new", string(got))
	}
}

// TestPlaceAcrossFileSystems moves a file from /dev/shm (a tmpfs) into the test's folder,
// where the real rename fails with EXDEV, when this machine has one on another device.
func TestPlaceAcrossFileSystems(t *testing.T) {
	dir := t.TempDir()
	shm, err := os.MkdirTemp("/dev/shm", "fileutil-")
	if err != nil {
		t.Skipf("no /dev/shm to copy from: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	a, errA := os.Stat(shm)
	b, errB := os.Stat(dir)
	require.NoError(t, errors.Join(errA, errB))
	if a.Sys().(*syscall.Stat_t).Dev == b.Sys().(*syscall.Stat_t).Dev {
		t.Skip("/dev/shm and the test's temporary folder are one file system")
	}
	data := randomBytes(bufSize+5, 9)
	src := writeFile(t, filepath.Join(shm, "b.pte"), data)
	dst := filepath.Join(dir, "out", "b.pte")
	d, err := Place(src, dst, Move)
	require.NoError(t, err)
	assert.Equal(t, Digest{Bytes: int64(len(data)), SHA256: sum(data)}, d)
	assert.NoFileExists(t, src)
	assert.FileExists(t, dst)
}

// failingReader yields left bytes, then fails as a disk read error would.
type failingReader struct{ left int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, &fs.PathError{Op: "read", Path: "/somewhere", Err: syscall.EIO}
	}
	n := min(len(p), r.left)
	clear(p[:n])
	r.left -= n
	return n, nil
}

func (r *failingReader) Close() error { return nil }

// placeOld is what dst held before a failed Place, which must survive it whole.
const placeOld = "the previous export's file"

// placePaths are a failure case's source and destination.
type placePaths struct{ src, dst string }

// placeFailure is one way Place fails: setup makes the files that fail it, want is the
// sentence it must fail with.
type placeFailure struct {
	name    string
	how     How
	setup   func(t *testing.T, dir string) placePaths
	open    func(*failingReader) func(string) (io.ReadCloser, error)
	exdev   bool
	want    func(p placePaths) string
	is      error
	oldDst  bool // dst held placeOld before and must still
	ownPart bool // dst.part is the test's, not Place's
}

var placeFailures = []placeFailure{
	{
		name: "missing source", how: Move,
		setup: func(t *testing.T, dir string) placePaths {
			return placePaths{filepath.Join(dir, "in", "missing.pte"), filepath.Join(dir, "out", "a.pte")}
		},
		want: func(p placePaths) string { return "cannot open " + p.src + ": no such file or directory" },
		is:   fs.ErrNotExist,
	},
	{
		name: "source is a folder", how: Copy,
		setup: func(t *testing.T, dir string) placePaths {
			src := filepath.Join(dir, "in", "folder")
			require.NoError(t, os.MkdirAll(src, 0o755))
			return placePaths{src, filepath.Join(dir, "out", "a.pte")}
		},
		want: func(p placePaths) string { return "cannot copy " + p.src + " to " + p.dst + ": is a directory" },
		is:   syscall.EISDIR,
	},
	{
		name: "read fails in the middle of a copy across file systems", how: Move, exdev: true, oldDst: true,
		setup: func(t *testing.T, dir string) placePaths {
			return placePaths{writeFile(t, filepath.Join(dir, "in", "a.pte"), randomBytes(3*bufSize, 1)), filepath.Join(dir, "out", "a.pte")}
		},
		open: func(r *failingReader) func(string) (io.ReadCloser, error) {
			return func(string) (io.ReadCloser, error) { return r, nil }
		},
		want: func(p placePaths) string { return "cannot copy " + p.src + " to " + p.dst + ": input/output error" },
		is:   syscall.EIO,
	},
	{
		name: "destination is a folder with files in it", how: Move,
		setup: func(t *testing.T, dir string) placePaths {
			dst := filepath.Join(dir, "out", "a.pte")
			writeFile(t, filepath.Join(dst, "keep"), []byte("x"))
			return placePaths{writeFile(t, filepath.Join(dir, "in", "a.pte"), []byte("pte")), dst}
		},
		// os.Rename refuses to replace a folder with EEXIST
		want: func(p placePaths) string { return "cannot rename a temporary file onto " + p.dst + ": file exists" },
		is:   fs.ErrExist,
	},
	{
		name: "destination's folder is a file", how: Copy,
		setup: func(t *testing.T, dir string) placePaths {
			blocker := writeFile(t, filepath.Join(dir, "out"), []byte("x"))
			return placePaths{writeFile(t, filepath.Join(dir, "in", "a.pte"), []byte("pte")), filepath.Join(blocker, "a.pte")}
		},
		want: func(p placePaths) string { return "cannot create " + filepath.Dir(p.dst) + ": not a directory" },
		is:   syscall.ENOTDIR,
	},
	{
		name: "temporary file cannot be created", how: Copy, oldDst: true, ownPart: true,
		setup: func(t *testing.T, dir string) placePaths {
			dst := filepath.Join(dir, "out", "a.pte")
			writeFile(t, filepath.Join(dst+".part", "keep"), []byte("x"))
			return placePaths{writeFile(t, filepath.Join(dir, "in", "a.pte"), []byte("pte")), dst}
		},
		want: func(p placePaths) string { return "cannot create " + p.dst + ".part: is a directory" },
		is:   syscall.EISDIR,
	},
}

// TestPlaceFailures checks that a failed Place says what failed in one sentence naming
// each file once, leaves no partial dst (an older dst survives whole), keeps the source,
// and removes dst.part.
func TestPlaceFailures(t *testing.T) {
	for _, tc := range placeFailures {
		t.Run(tc.name, func(t *testing.T) { checkPlaceFailure(t, tc) })
	}
}

// checkPlaceFailure sets up tc, places its source and checks the error and what is left.
func checkPlaceFailure(t *testing.T, tc placeFailure) {
	dir := t.TempDir()
	p := tc.setup(t, dir)
	if tc.oldDst {
		writeFile(t, p.dst, []byte(placeOld))
	}
	srcBefore, srcErr := os.ReadFile(p.src)
	r := &renamer{}
	if tc.exdev {
		r.fail = syscall.EXDEV
	}
	pl := placer{rename: r.rename, open: openFile}
	fr := &failingReader{left: 2*bufSize + 100}
	if tc.open != nil {
		pl.open = tc.open(fr)
	}

	_, err := pl.place(p.src, p.dst, tc.how)

	require.Error(t, err)
	msg := tc.want(p)
	assert.Equal(t, msg, err.Error())
	assert.ErrorIs(t, err, tc.is)
	assert.Equal(t, strings.Count(msg, p.dst), strings.Count(err.Error(), p.dst))
	assert.LessOrEqual(t, strings.Count(err.Error(), p.src), 1, "src named more than once")
	if tc.open != nil {
		assert.Zero(t, fr.left, "the read did not fail mid-copy")
	}
	if tc.oldDst {
		got, err := os.ReadFile(p.dst)
		require.NoError(t, err)
		assert.Equal(t, placeOld, string(got), "the older dst was touched")
	} else if st, err := os.Stat(p.dst); err == nil {
		assert.True(t, st.IsDir(), "a partial dst was left")
	}
	if !tc.ownPart {
		assert.NoFileExists(t, p.dst+".part")
		assert.NoDirExists(t, p.dst+".part")
	}
	if srcErr == nil {
		after, err := os.ReadFile(p.src)
		require.NoError(t, err, "the source was lost")
		assert.True(t, string(after) == string(srcBefore), "the source changed")
	}
}
