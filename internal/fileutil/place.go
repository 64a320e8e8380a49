package fileutil

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
)

// How says whether Place may take the source away.
type How int

const (
	// Move renames the source onto the destination when both are on one file system,
	// and copies then removes it otherwise: for a tool's output in the work folder.
	Move How = iota
	// Copy leaves the source where it is: for files in a user's model folder or a cache.
	Copy
)

// Place puts src at dst and returns dst's digest, reading the bytes once: a rename is
// followed by one hashing pass, a copy hashes as it writes. A copy goes through dst.part
// and a rename onto dst, so dst is either the old file or the whole new one; on failure
// dst.part is removed. A crash can leave dst.part behind, and the next Place of the same
// dst overwrites it. A copy gets the mode any new file gets; a rename keeps src's.
func Place(src, dst string, how How) (Digest, error) {
	return placer{rename: os.Rename, open: openFile}.place(src, dst, how)
}

// placer holds the two operations the tests replace: the rename of src onto dst (to
// force the copy path as across file systems) and the opening of src (to fail mid-copy).
type placer struct {
	rename func(oldpath, newpath string) error
	open   func(name string) (io.ReadCloser, error)
}

func openFile(name string) (io.ReadCloser, error) { return os.Open(name) }

func (p placer) place(src, dst string, how How) (Digest, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Digest{}, Error("create", filepath.Dir(dst), err)
	}
	if how == Move && p.rename(src, dst) == nil {
		return Hash(dst)
	}
	// Any failed rename falls through to the copy: across file systems it is the way,
	// and otherwise (src missing, dst a folder) the copy names the real problem.
	d, err := p.copy(src, dst)
	if err != nil {
		return Digest{}, err
	}
	if how == Move {
		// dst is complete; a source left in the work folder costs disk, not correctness.
		_ = os.Remove(src)
	}
	return d, nil
}

// copy streams src into dst.part, hashing the bytes as they pass, and renames it onto dst.
func (p placer) copy(src, dst string) (Digest, error) {
	in, err := p.open(src)
	if err != nil {
		return Digest{}, Error("open", src, err)
	}
	defer in.Close()
	tmp := dst + ".part"
	out, err := os.Create(tmp)
	if err != nil {
		return Digest{}, Error("create", tmp, err)
	}
	h := sha256.New()
	n, err := copyBuffer(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return Digest{}, Error("copy "+src+" to", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return Digest{}, Error("rename a temporary file onto", dst, err)
	}
	return digest(n, h), nil
}
