package pte

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"
)

// Program is a .pte file read without its tensor data: the header, the Program flatbuffer
// decoded into plain Go values, and where each segment and delegate blob lies.
type Program struct {
	// Size is the file size in bytes.
	Size int64
	// Header is nil for files written without segment data.
	Header *ExtendedHeader
	// ProgramSize is the length of the flatbuffer part (with headers) from offset 0.
	ProgramSize int64
	Version     uint32
	Methods     []Method
	// ConstantBuffers are the legacy inline constants (Program.constant_buffer).
	ConstantBuffers []InlineData
	// InlineData is Program.backend_delegate_data: delegate blobs kept in the program.
	InlineData          []InlineData
	Segments            []DataSegment
	ConstantSegment     *SubsegmentOffsets
	MutableDataSegments []SubsegmentOffsets
	NamedData           []NamedData
}

// Open reads the program of a .pte through r. Only the header and the flatbuffer are read
// (plus the first bytes of each delegate blob for its signature, and the graph of each
// XNNPACK or Vulkan payload, which leaves out its weights), so inspecting a
// multi-gigabyte file costs little more than inspecting a small one.
func Open(r io.ReaderAt, size int64) (*Program, error) {
	hdr, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	progSize := size
	if hdr != nil {
		progSize = int64(hdr.ProgramSize)
	}
	if progSize > MaxProgramSize {
		return nil, fmt.Errorf("program of %d bytes exceeds the %d-byte limit (no extended header?)", progSize, MaxProgramSize)
	}
	buf := make([]byte, progSize)
	if _, err := r.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && progSize == size) {
		return nil, fmt.Errorf("read program (%d bytes): %w", progSize, err)
	}
	p := &Program{Size: size, Header: hdr, ProgramSize: progSize}
	if err := p.decode(newFbuf(buf)); err != nil {
		return nil, err
	}
	if err := p.place(); err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if err := p.readSignatures(r, buf); err != nil {
		return nil, err
	}
	p.readGraphs(r, buf)
	return p, nil
}

// OpenFile opens path and reads its program; the file is closed before returning. Errors
// name the path once: "read model.pte: read header: input/output error".
//
// Only a regular file is read: a named pipe would block the open until a writer comes
// (and no signal could end that), and a device is no .pte. The mode is checked before
// the open, so a pipe or device is never opened, and again on the opened file, which is
// opened non-blocking, so that a pipe put in the file's place between the two cannot
// block either.
func OpenFile(path string) (*Program, error) {
	return opener{stat: os.Stat, open: openNonBlocking}.read(path)
}

// opener holds the two calls OpenFile makes before reading, which the tests replace: to
// see that a pipe is refused without being opened, and to put a pipe in a file's place
// between the check and the open.
type opener struct {
	stat func(name string) (fs.FileInfo, error)
	open func(name string) (*os.File, error)
}

func openNonBlocking(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func (o opener) read(path string) (*Program, error) {
	if st, err := o.stat(path); err == nil {
		if err := regular(path, st.Mode()); err != nil {
			return nil, err
		}
	} // else the open names what is wrong: "open model.pte: no such file or directory"
	f, err := o.open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(path, st.Mode()); err != nil {
		return nil, err
	}
	p, err := Open(pathless{f}, st.Size())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return p, nil
}

// regular refuses a file that is not a regular file, saying what it is instead.
func regular(path string, mode fs.FileMode) error {
	var what string
	switch {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	default:
		return fmt.Errorf("%s is not a regular file (%s), so not a .pte file", path, mode.Type())
	}
	return fmt.Errorf("%s is %s, not a .pte file", path, what)
}

// pathless drops the path from the file's read errors, which OpenFile adds once itself.
type pathless struct{ f *os.File }

func (r pathless) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.f.ReadAt(b, off)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return n, err
}

// Method returns the method called name, or nil.
func (p *Program) Method(name string) *Method {
	for i := range p.Methods {
		if p.Methods[i].Name == name {
			return &p.Methods[i]
		}
	}
	return nil
}

// MethodNames returns every method name, sorted.
func (p *Program) MethodNames() []string {
	names := make([]string, len(p.Methods))
	for i, m := range p.Methods {
		names[i] = m.Name
	}
	sort.Strings(names)
	return names
}

// SegmentBase is the file offset of the first segment (0 without an extended header).
func (p *Program) SegmentBase() int64 {
	if p.Header == nil {
		return 0
	}
	return int64(p.Header.SegmentBaseOffset)
}

// place computes absolute file offsets of segments and checks they lie inside the file.
func (p *Program) place() error {
	base := uint64(p.SegmentBase())
	for i := range p.Segments {
		s := &p.Segments[i]
		if s.Size == 0 {
			s.FileOffset = int64(min(base+s.Offset, uint64(p.Size)))
			continue
		}
		if p.Header == nil || base == 0 {
			return fmt.Errorf("segments[%d]: %d bytes of segment data but no extended header locates them", i, s.Size)
		}
		start := base + s.Offset
		end := start + s.Size
		if start < base || end < start || end > uint64(p.Size) {
			return fmt.Errorf("segments[%d]: bytes %d..%d lie beyond the %d-byte file (truncated?)", i, start, end, p.Size)
		}
		s.FileOffset = int64(start)
	}
	return nil
}

// IsConstant reports whether m is a metadata getter: no inputs and no instructions.
func (m *Method) IsConstant() bool {
	if len(m.Inputs) > 0 {
		return false
	}
	return m.InstructionCount() == 0
}

// InstructionCount counts instructions over all chains.
func (m *Method) InstructionCount() int {
	n := 0
	for _, c := range m.Chains {
		n += len(c.Instructions)
	}
	return n
}

// Count returns how many instructions of kind k the method has.
func (m *Method) Count(k InstrKind) int {
	n := 0
	for _, c := range m.Chains {
		for _, in := range c.Instructions {
			if in.Kind == k {
				n++
			}
		}
	}
	return n
}

// Backends returns the sorted, distinct delegate ids of the method.
func (m *Method) Backends() []string {
	seen := map[string]bool{}
	var ids []string
	for _, d := range m.Delegates {
		if !seen[d.ID] {
			seen[d.ID] = true
			ids = append(ids, d.ID)
		}
	}
	sort.Strings(ids)
	return ids
}
