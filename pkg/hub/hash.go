package hub

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

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
