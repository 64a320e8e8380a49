package pte

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// FileIdentifier is the only program identifier the 1.x runtime accepts.
const FileIdentifier = "ET12"

// MaxProgramSize bounds the flatbuffer part read into memory. export_llm puts constants and
// delegate blobs in segments, so real programs are kilobytes to a few megabytes; a larger
// value means a broken header or a file without one that is mostly tensor data.
const MaxProgramSize = 256 << 20

// headBytes is how much of the file start the reader fetches first (kNumHeadBytes).
const headBytes = 64

// ExtendedHeader is the optional "eh00" header after the flatbuffer's file identifier.
type ExtendedHeader struct {
	// Length is 32 in files from ExecuTorch 1.0 on and 24 in older ones, which lack
	// SegmentDataSize.
	Length            uint32
	ProgramSize       uint64
	SegmentBaseOffset uint64
	SegmentDataSize   uint64
}

// ErrNotPTE reports a file that is not an ExecuTorch program at all.
var ErrNotPTE = errors.New("not an ExecuTorch .pte file")

// readHeader reads the file identifier and the extended header, if any.
func readHeader(r io.ReaderAt, size int64) (*ExtendedHeader, error) {
	if size < 8 {
		return nil, fmt.Errorf("%w: %d bytes is shorter than the 8-byte flatbuffer prefix", ErrNotPTE, size)
	}
	head := make([]byte, min(size, headBytes))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read header: %w", err)
	}
	id := string(head[4:8])
	if id != FileIdentifier {
		if id[:2] == "ET" {
			return nil, fmt.Errorf("file identifier %q: this reader supports %s only", id, FileIdentifier)
		}
		return nil, fmt.Errorf("%w: file identifier is %q, want %q", ErrNotPTE, id, FileIdentifier)
	}
	if len(head) < 12 || string(head[8:12]) != "eh00" {
		return nil, nil
	}
	return parseExtendedHeader(head, size)
}

func parseExtendedHeader(head []byte, size int64) (*ExtendedHeader, error) {
	if len(head) < 32 {
		return nil, fmt.Errorf("extended header: file ends at %d bytes, inside the header", len(head))
	}
	h := &ExtendedHeader{
		Length:            binary.LittleEndian.Uint32(head[12:]),
		ProgramSize:       binary.LittleEndian.Uint64(head[16:]),
		SegmentBaseOffset: binary.LittleEndian.Uint64(head[24:]),
	}
	if h.Length < 24 {
		return nil, fmt.Errorf("extended header: length %d is below the minimum 24", h.Length)
	}
	if h.Length >= 32 {
		if len(head) < 40 {
			return nil, fmt.Errorf("extended header: file ends inside segment_data_size")
		}
		h.SegmentDataSize = binary.LittleEndian.Uint64(head[32:])
	}
	if h.ProgramSize < 8 || h.ProgramSize > uint64(size) {
		return nil, fmt.Errorf("extended header: program_size %d outside the %d-byte file", h.ProgramSize, size)
	}
	if h.SegmentBaseOffset != 0 {
		if h.SegmentBaseOffset < h.ProgramSize {
			return nil, fmt.Errorf("extended header: segment_base_offset %d lies inside the %d-byte program",
				h.SegmentBaseOffset, h.ProgramSize)
		}
		end := h.SegmentBaseOffset + h.SegmentDataSize
		if end < h.SegmentBaseOffset || end > uint64(size) {
			return nil, fmt.Errorf("truncated: segments end at %d+%d but the file has %d bytes",
				h.SegmentBaseOffset, h.SegmentDataSize, size)
		}
	}
	return h, nil
}
