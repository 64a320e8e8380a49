// Package ptetest writes genuine .pte files for tests and for the stand-in ExecuTorch
// toolchain: real Program flatbuffers (built with the flatbuffers Go builder), the extended
// header, aligned segments, and delegate blobs that begin with each backend's magic. The
// tensors and blobs are zeros beyond their first bytes, so a multi-gigabyte file can be
// written sparsely in milliseconds.
package ptetest

import "fmt"

// Blob is segment or delegate data: Head is its first bytes, the rest of Size is zeros.
type Blob struct {
	Head []byte
	Size int64
}

func (b Blob) size() int64 { return max(b.Size, int64(len(b.Head))) }

// CompileSpec is one key/value the backend recorded at lowering time.
type CompileSpec struct {
	Key   string
	Value []byte
}

// Method is a real (non-constant) method. With a Backend it is one DelegateCall to that
// backend id; without one it is a single aten::add.out KernelCall.
type Method struct {
	Name         string
	Backend      string
	Blob         Blob
	CompileSpecs []CompileSpec
	// Inline keeps the blob inside the program (backend_delegate_data) instead of a segment.
	Inline bool
	// NoCall lists the delegate but gives the method no instruction that calls it, as a
	// method whose lowered graph is never run would be.
	NoCall bool
	// CallIndex is the delegate index the DelegateCall names: 0, the method's one delegate,
	// unless a test builds a call to a delegate that does not exist.
	CallIndex int32
	// CPULinears adds that many aten::linear.out KernelCalls after the delegate call, as
	// a lowering that left its linears to the portable kernels writes them.
	CPULinears int
	// BadBlobIndex, when not zero, is written as the delegate's blob index (inline or
	// segment) instead of the one its blob got, for tests of readers that must refuse it.
	BadBlobIndex uint32
	// Planned adds memory-planned tensors to the method's values, each at its own place,
	// as export_llm plans a KV cache's buffers beside the activations.
	Planned []Planned
}

// Planned is one memory-planned tensor: its element type (c10::ScalarType numbering: 1
// int8, 6 float32) and sizes.
type Planned struct {
	ScalarType int8
	Sizes      []int32
}

// bytes is the tensor's size for the element types a KV cache uses.
func (p Planned) bytes() int64 {
	n := int64(1)
	for _, s := range p.Sizes {
		n *= int64(s)
	}
	if p.ScalarType == 6 {
		return 4 * n
	}
	return n
}

// Meta is one constant method and its value: int, int64, bool, float64, string, or a
// slice of those (one output per element, as export_llm emits lists).
type Meta struct {
	Name  string
	Value any
}

// Named is one named_data entry with the blob it maps to.
type Named struct {
	Key  string
	Blob Blob
}

// Spec describes a whole .pte file.
type Spec struct {
	Methods  []Method
	Metadata []Meta
	// Constants is the constant segment (segment 0), written even when empty as export
	// does.
	Constants Blob
	NamedData []Named
	// HeaderLength is the extended header's length field: 32 (0 means 32), 24 for the
	// pre-1.0 form, or -1 for no header, which allows no segment data.
	HeaderLength int
}

func (s Spec) headerLength() (int, error) {
	switch s.HeaderLength {
	case 0, 32:
		return 32, nil
	case 24, -1:
		return s.HeaderLength, nil
	}
	return 0, fmt.Errorf("header length %d: want 24, 32 or -1", s.HeaderLength)
}
