package fileutil

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
)

// Digest is what the export report and the Hub upload need to know of a file's bytes.
// Computing it once, while the bytes stream past anyway, is what keeps a multi-gigabyte
// .pte from being read a second time.
type Digest struct {
	Bytes  int64
	SHA256 string // lowercase hex
}

// bufSize is the copy buffer: large enough that syscalls are a small share of the time
// sha256 takes, small enough to allocate per call.
const bufSize = 1 << 20

// Hash streams a file through sha256; it never holds more than one buffer of it.
func Hash(path string) (Digest, error) { return HashContext(context.Background(), path) }

// HashContext is Hash that stops at the next buffer once ctx ends: hashing a multi-gigabyte
// file must not keep a command from stopping when asked.
func HashContext(ctx context.Context, path string) (Digest, error) {
	if err := ctx.Err(); err != nil {
		return Digest{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, Error("open", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := copyBuffer(h, ctxReader{ctx, f})
	if ctx.Err() != nil {
		return Digest{}, ctx.Err()
	}
	if err != nil {
		return Digest{}, Error("hash", path, err)
	}
	return digest(n, h), nil
}

// copyBuffer copies through one bufSize buffer. It hides the source's WriteTo, which
// *os.File has and which would otherwise copy through io.Copy's own 32 KiB buffer.
func copyBuffer(w io.Writer, r io.Reader) (int64, error) {
	return io.CopyBuffer(w, struct{ io.Reader }{r}, make([]byte, bufSize))
}

// ctxReader ends a read loop once its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func digest(n int64, h hash.Hash) Digest {
	return Digest{Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
}
