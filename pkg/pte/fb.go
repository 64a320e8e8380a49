package pte

import (
	"encoding/binary"
	"fmt"
	"math"
)

// fbuf is a bounds-checked view of a flatbuffer. The flatbuffers Go runtime trusts its
// input and panics on bad offsets; a .pte comes from tools we do not control and from
// fuzzers, so every read here checks its bounds and returns an error instead.
//
// budget limits how much decoding a buffer may cause: flatbuffers lets many offsets point
// at one table, so a small file could otherwise expand into a huge object graph. Each table
// and vector element charges roughly its decoded size in bytes.
type fbuf struct {
	b      []byte
	budget int64
}

// newFbuf returns a reader whose decoding budget grows with the buffer: honest programs
// decode to a few times their size, sharing tricks run out of budget.
func newFbuf(b []byte) *fbuf {
	return &fbuf{b: b, budget: 24*int64(len(b)) + 1<<20}
}

func (f *fbuf) charge(n int64) error {
	f.budget -= n
	if f.budget < 0 {
		return fmt.Errorf("program decodes to far more data than its size (shared or looping offsets)")
	}
	return nil
}

func (f *fbuf) check(pos, n uint64) error {
	if pos > uint64(len(f.b)) || n > uint64(len(f.b))-pos {
		return fmt.Errorf("offset %d+%d outside the %d-byte program", pos, n, len(f.b))
	}
	return nil
}

func (f *fbuf) u8(pos uint64) (uint8, error) {
	if err := f.check(pos, 1); err != nil {
		return 0, err
	}
	return f.b[pos], nil
}

func (f *fbuf) u16(pos uint64) (uint16, error) {
	if err := f.check(pos, 2); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(f.b[pos:]), nil
}

func (f *fbuf) u32(pos uint64) (uint32, error) {
	if err := f.check(pos, 4); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(f.b[pos:]), nil
}

func (f *fbuf) u64(pos uint64) (uint64, error) {
	if err := f.check(pos, 8); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(f.b[pos:]), nil
}

// deref follows the uoffset stored at pos.
func (f *fbuf) deref(pos uint64) (uint64, error) {
	off, err := f.u32(pos)
	if err != nil {
		return 0, err
	}
	target := pos + uint64(off)
	if target >= uint64(len(f.b)) {
		return 0, fmt.Errorf("reference at %d points to %d, past the %d-byte program", pos, target, len(f.b))
	}
	return target, nil
}

// table is one flatbuffer table: its position and its vtable.
type table struct {
	f      *fbuf
	pos    uint64
	vt     uint64
	vtSize uint16
}

func (f *fbuf) table(pos uint64) (table, error) {
	if err := f.charge(32); err != nil {
		return table{}, err
	}
	soff, err := f.u32(pos)
	if err != nil {
		return table{}, fmt.Errorf("table at %d: %w", pos, err)
	}
	vt := int64(pos) - int64(int32(soff))
	if vt < 0 || vt > int64(len(f.b)) {
		return table{}, fmt.Errorf("table at %d: vtable offset %d outside the program", pos, vt)
	}
	vtSize, err := f.u16(uint64(vt))
	if err != nil {
		return table{}, fmt.Errorf("table at %d: vtable: %w", pos, err)
	}
	if vtSize < 4 || vtSize%2 != 0 {
		return table{}, fmt.Errorf("table at %d: vtable size %d is malformed", pos, vtSize)
	}
	if err := f.check(uint64(vt), uint64(vtSize)); err != nil {
		return table{}, fmt.Errorf("table at %d: vtable: %w", pos, err)
	}
	return table{f: f, pos: pos, vt: uint64(vt), vtSize: vtSize}, nil
}

// field returns the absolute position of slot's data, or 0 when the field is absent.
func (t table) field(slot int, width uint64) (uint64, error) {
	at := uint64(4 + 2*slot)
	if at+2 > uint64(t.vtSize) {
		return 0, nil
	}
	off := uint64(binary.LittleEndian.Uint16(t.f.b[t.vt+at:]))
	if off == 0 {
		return 0, nil
	}
	// Like the flatbuffers verifier, bound fields by the buffer, not by the vtable's
	// table size: some serializers record a table size that omits alignment padding.
	if err := t.f.check(t.pos+off, width); err != nil {
		return 0, fmt.Errorf("field %d: %w", slot, err)
	}
	return t.pos + off, nil
}

func (t table) u8(slot int) (uint8, error) {
	p, err := t.field(slot, 1)
	if err != nil || p == 0 {
		return 0, err
	}
	return t.f.u8(p)
}

func (t table) boolean(slot int) (bool, error) {
	v, err := t.u8(slot)
	return v != 0, err
}

func (t table) u32(slot int) (uint32, error) {
	p, err := t.field(slot, 4)
	if err != nil || p == 0 {
		return 0, err
	}
	return t.f.u32(p)
}

func (t table) i32(slot int) (int32, error) {
	v, err := t.u32(slot)
	return int32(v), err
}

func (t table) u64(slot int) (uint64, error) {
	p, err := t.field(slot, 8)
	if err != nil || p == 0 {
		return 0, err
	}
	return t.f.u64(p)
}

func (t table) i64(slot int) (int64, error) {
	v, err := t.u64(slot)
	return int64(v), err
}

func (t table) f64(slot int) (float64, error) {
	v, err := t.u64(slot)
	return math.Float64frombits(v), err
}

// ref returns the target of a reference field; ok is false when the field is absent.
func (t table) ref(slot int) (pos uint64, ok bool, err error) {
	p, err := t.field(slot, 4)
	if err != nil || p == 0 {
		return 0, false, err
	}
	target, err := t.f.deref(p)
	return target, err == nil, err
}

func (t table) sub(slot int) (table, bool, error) {
	p, ok, err := t.ref(slot)
	if err != nil || !ok {
		return table{}, false, err
	}
	sub, err := t.f.table(p)
	return sub, err == nil, err
}

// vector returns the position of the first element and the element count, after checking
// that count×width bytes lie inside the buffer and charging them to the budget.
func (t table) vector(slot int, width uint64) (start uint64, n int, err error) {
	p, ok, err := t.ref(slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	count, err := t.f.u32(p)
	if err != nil {
		return 0, 0, err
	}
	start = p + 4
	if err := t.f.check(start, uint64(count)*width); err != nil {
		return 0, 0, fmt.Errorf("vector of %d elements: %w", count, err)
	}
	charge := int64(count) * int64(width)
	if width < 8 {
		charge = int64(count) * 8
	}
	if err := t.f.charge(charge); err != nil {
		return 0, 0, err
	}
	return start, int(count), nil
}

func (t table) str(slot int) (string, error) {
	start, n, err := t.vector(slot, 1)
	if err != nil || n == 0 {
		return "", err
	}
	return string(t.f.b[start : start+uint64(n)]), nil
}

func (t table) bytesLen(slot int) (start uint64, n int, err error) {
	return t.vector(slot, 1)
}

func (t table) bytes(slot int) ([]byte, error) {
	start, n, err := t.vector(slot, 1)
	if err != nil || n == 0 {
		return nil, err
	}
	return append([]byte(nil), t.f.b[start:start+uint64(n)]...), nil
}

func (t table) i32s(slot int) ([]int32, error) {
	start, n, err := t.vector(slot, 4)
	if err != nil || n == 0 {
		return nil, err
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(t.f.b[start+4*uint64(i):]))
	}
	return out, nil
}

func (t table) i64s(slot int) ([]int64, error) {
	start, n, err := t.vector(slot, 8)
	if err != nil || n == 0 {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(t.f.b[start+8*uint64(i):]))
	}
	return out, nil
}

func (t table) u64s(slot int) ([]uint64, error) {
	v, err := t.i64s(slot)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = uint64(x)
	}
	return out, nil
}

func (t table) f64s(slot int) ([]float64, error) {
	v, err := t.i64s(slot)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Float64frombits(uint64(x))
	}
	return out, nil
}

func (t table) bools(slot int) ([]bool, error) {
	b, err := t.bytes(slot)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(b))
	for i, x := range b {
		out[i] = x != 0
	}
	return out, nil
}

// tables decodes a vector of tables with fn, naming the element in errors.
func (t table) tables(slot int, what string, fn func(i int, e table) error) (int, error) {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	for i := 0; i < n; i++ {
		p, err := t.f.deref(start + 4*uint64(i))
		if err != nil {
			return 0, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		e, err := t.f.table(p)
		if err != nil {
			return 0, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		if err := fn(i, e); err != nil {
			return 0, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
	}
	return n, nil
}
