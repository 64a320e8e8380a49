package hub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
)

// HashFile streams a file once and returns its sha256 (hex) and size. Carry the result in
// the export report so that publishing never hashes the file again.
func HashFile(path string) (sha string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hash %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// GitBlobSHA1 is the git object id of a regular file: sha1("blob <size>\x00" + content).
// The Hub reports it as the oid of non-LFS files.
func GitBlobSHA1(r io.Reader, size int64) (string, error) {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	n, err := io.Copy(h, r)
	if err != nil {
		return "", fmt.Errorf("git blob sha1: %w", err)
	}
	if n != size {
		return "", fmt.Errorf("git blob sha1: read %d bytes, want %d", n, size)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
