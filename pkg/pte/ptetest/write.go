package ptetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	flatbuffers "github.com/google/flatbuffers/go"
)

// headerPad is the padded length of the extended header (both the 24- and 32-byte forms).
const headerPad = 32

// maxBuild bounds Build, which holds the whole file in memory; use Write or WriteFile for
// bigger files.
const maxBuild = 64 << 20

// layout is a file ready to write: the program bytes and where each segment goes.
type layout struct {
	program  []byte
	base     int64
	segments []segmentPlan
	size     int64
}

func plan(spec Spec) (*layout, error) {
	hlen, err := spec.headerLength()
	if err != nil {
		return nil, err
	}
	pb := &programBuilder{b: flatbuffers.NewBuilder(4096), spec: spec}
	if err := pb.assignSegments(hlen > 0); err != nil {
		return nil, err
	}
	fb, err := pb.build()
	if err != nil {
		return nil, err
	}
	l := &layout{program: fb, segments: pb.segments, size: int64(len(fb))}
	if hlen < 0 {
		return l, nil
	}
	var dataSize int64
	if n := len(l.segments); n > 0 {
		last := l.segments[n-1]
		dataSize = last.offset + last.blob.size()
	}
	prog := make([]byte, 0, len(fb)+headerPad)
	prog = append(prog, fb[:8]...)
	prog = append(prog, extendedHeader(hlen, 0, 0, 0)...)
	prog = append(prog, fb[8:]...)
	binary.LittleEndian.PutUint32(prog, binary.LittleEndian.Uint32(prog)+headerPad)
	l.base = align(int64(len(prog)), segmentAlignment)
	copy(prog[8:], extendedHeader(hlen, int64(len(prog)), l.base, dataSize))
	l.program = prog
	l.size = l.base + dataSize
	return l, nil
}

// extendedHeader renders the eh00 header padded to 32 bytes.
func extendedHeader(length int, progSize, base, dataSize int64) []byte {
	h := make([]byte, headerPad)
	copy(h, "eh00")
	binary.LittleEndian.PutUint32(h[4:], uint32(length))
	binary.LittleEndian.PutUint64(h[8:], uint64(progSize))
	binary.LittleEndian.PutUint64(h[16:], uint64(base))
	if length >= 32 {
		binary.LittleEndian.PutUint64(h[24:], uint64(dataSize))
	}
	return h
}

// Size returns the size of the file spec describes, without writing it.
func Size(spec Spec) (int64, error) {
	l, err := plan(spec)
	if err != nil {
		return 0, err
	}
	return l.size, nil
}

// Build returns the whole file; for files over 64 MiB use WriteFile or Write.
func Build(spec Spec) ([]byte, error) {
	l, err := plan(spec)
	if err != nil {
		return nil, err
	}
	if l.size > maxBuild {
		return nil, fmt.Errorf("file of %d bytes is too big to build in memory; use WriteFile", l.size)
	}
	var buf bytes.Buffer
	if _, err := l.writeTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write streams the file to w (zeros are written, not seeked over) and returns its size.
func Write(w io.Writer, spec Spec) (int64, error) {
	l, err := plan(spec)
	if err != nil {
		return 0, err
	}
	return l.writeTo(w)
}

// WriteFile writes the file at path. Zero runs are left as holes (the file is extended
// with Truncate), so a 3 GiB segment costs no disk and no time on filesystems with sparse
// files.
func WriteFile(path string, spec Spec) (err error) {
	l, err := plan(spec)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	if _, err := f.WriteAt(l.program, 0); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	for i, s := range l.segments {
		if _, err := f.WriteAt(s.blob.Head, l.base+s.offset); err != nil {
			return fmt.Errorf("write %s segment %d: %w", path, i, err)
		}
	}
	if err := f.Truncate(l.size); err != nil {
		return fmt.Errorf("extend %s to %d bytes: %w", path, l.size, err)
	}
	return nil
}

func (l *layout) writeTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	if _, err := cw.Write(l.program); err != nil {
		return cw.n, err
	}
	for _, s := range l.segments {
		if err := cw.zeros(l.base + s.offset - cw.n); err != nil {
			return cw.n, err
		}
		if _, err := cw.Write(s.blob.Head); err != nil {
			return cw.n, err
		}
		if err := cw.zeros(s.blob.size() - int64(len(s.blob.Head))); err != nil {
			return cw.n, err
		}
	}
	if cw.n != l.size {
		return cw.n, errors.New("ptetest: layout and written size disagree")
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var zeroBlock [64 << 10]byte

func (c *countWriter) zeros(n int64) error {
	for n > 0 {
		k := min(n, int64(len(zeroBlock)))
		if _, err := c.Write(zeroBlock[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
