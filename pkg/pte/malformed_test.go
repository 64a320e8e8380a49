package pte_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openBytes(b []byte) (*pte.Program, error) {
	return pte.Open(bytes.NewReader(b), int64(len(b)))
}

func TestMalformed(t *testing.T) {
	good := readFixture(t, "arduino_add_model.pte")
	edit := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	put32 := func(at int, v uint32) []byte {
		return edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[at:], v); return b })
	}
	put64 := func(at int, v uint64) []byte {
		return edit(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[at:], v); return b })
	}
	tests := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "shorter than", nil},
		{"not a pte", "not an ExecuTorch", []byte("PK\x03\x04 this is a zip file")},
		{"other version", `"ET13"`, edit(func(b []byte) []byte { copy(b[4:], "ET13"); return b })},
		{"header length below 24", "below the minimum", put32(12, 16)},
		{"program bigger than file", "program_size", put64(16, 1<<40)},
		{"segment base inside program", "inside the", put64(24, 64)},
		{"segment data past end", "truncated", put64(32, 5000)},
		{"truncated segment", "truncated", good[:len(good)-1]},
		{"truncated program", "", good[:900]},
		{"root offset past end", "root offset", put32(0, 1<<30)},
		{"bad vtable", "vtable", edit(func(b []byte) []byte {
			root := binary.LittleEndian.Uint32(b)
			binary.LittleEndian.PutUint32(b[root:], 0x7fffffff)
			return b
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openBytes(tc.data)
			if err == nil {
				t.Fatal("opened without error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestEveryPrefix opens every truncation of every fixture: each must fail cleanly.
func TestEveryPrefix(t *testing.T) {
	for _, name := range []string{"add.pte", "arduino_add_model.pte", "ModuleLinear-no-constant-segment.pte"} {
		b := readFixture(t, name)
		for n := 0; n < len(b); n++ {
			if _, err := openBytes(b[:n]); err == nil && n < len(b)-8 {
				t.Errorf("%s[:%d] opened without error", name, n)
			}
		}
	}
}

// TestCorruptedBytes flips each byte of a program: Open may succeed or fail, never panic.
func TestCorruptedBytes(t *testing.T) {
	b := readFixture(t, "add.pte")
	for i := range b {
		for _, x := range []byte{0xff, 0x80, 0x01} {
			c := append([]byte(nil), b...)
			c[i] ^= x
			if p, err := openBytes(c); err == nil {
				_ = p.Metadata()
			}
		}
	}
}

// TestSharedOffsetBomb builds a small buffer whose vectors all point at the same tables, so
// that a naive decoder would expand it to hundreds of millions of values.
func TestSharedOffsetBomb(t *testing.T) {
	const n = 20000
	b := bomb(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := openBytes(b)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "far more data") {
		t.Fatalf("error %v, want the decoding budget to stop it", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("allocated %d bytes decoding a %d-byte bomb", grew, len(b))
	}
}

// bomb lays out by hand: Program{execution_plan: [plan × n]}, plan{values: [null × n]},
// every element of both vectors pointing at the same table.
func bomb(n int) []byte {
	le := binary.LittleEndian
	plans := 24
	plan := plans + 4 + 4*n
	planVT, evVT := plan+8, plan+20
	values := plan + 24
	ev := values + 4 + 4*n
	b := make([]byte, ev+8)
	le.PutUint32(b[0:], 16)
	copy(b[4:], "ET12")
	// Program vtable at 8 (execution_plan at table offset 4), table at 16.
	le.PutUint16(b[8:], 8)
	le.PutUint16(b[10:], 8)
	le.PutUint16(b[14:], 4)
	le.PutUint32(b[16:], 8)
	le.PutUint32(b[20:], uint32(plans-20))
	le.PutUint32(b[plans:], uint32(n))
	le.PutUint32(b[values:], uint32(n))
	for i := 0; i < n; i++ {
		at := plans + 4 + 4*i
		le.PutUint32(b[at:], uint32(plan-at))
		at = values + 4 + 4*i
		le.PutUint32(b[at:], uint32(ev-at))
	}
	// Plan: vtable with 3 slots, values at table offset 4.
	le.PutUint32(b[plan:], uint32(int32(plan-planVT)))
	le.PutUint32(b[plan+4:], uint32(values-(plan+4)))
	le.PutUint16(b[planVT:], 10)
	le.PutUint16(b[planVT+2:], 8)
	le.PutUint16(b[planVT+8:], 4)
	// EValue with no fields (kind none).
	le.PutUint16(b[evVT:], 4)
	le.PutUint16(b[evVT+2:], 4)
	le.PutUint32(b[ev:], uint32(int32(ev-evVT)))
	return b
}

// TestBigFileFlatMemory writes a 3 GiB sparse file and checks that opening it reads only the
// program: little memory, whatever the segment size.
func TestBigFileFlatMemory(t *testing.T) {
	path := t.TempDir() + "/big.pte"
	spec, err := ptetest.LLM{Backend: "xnnpack", WeightsSize: 3 << 30,
		Metadata: ptetest.ExportLLMMetadata(2048, 4096, 1, []int64{2})}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if err := ptetest.WriteFile(path, spec); err != nil {
		t.Skipf("cannot write a sparse 3 GiB file here: %v", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := pte.OpenFile(path)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if p.Size < 3<<30 {
		t.Errorf("size %d, want over 3 GiB", p.Size)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("opening allocated %d bytes, want under 1 MiB", grew)
	}
}

// TestMalformedDelegates builds programs whose delegate references point past their tables:
// Open must refuse each, naming the method and the index, rather than let a later reader
// index out of range.
func TestMalformedDelegates(t *testing.T) {
	blob := ptetest.XNNPACKBlob(64)
	tests := []struct {
		name   string
		method ptetest.Method
		inline bool
		want   string
	}{
		{"call past the delegates", ptetest.Method{CallIndex: 1},
			false, `method "forward" chain 0 instruction 0: delegate 1 of 1`},
		{"negative call", ptetest.Method{CallIndex: -2},
			false, `method "forward" chain 0 instruction 0: delegate -2 of 1`},
		{"blob past the segments", ptetest.Method{BadBlobIndex: 7},
			false, `method "forward" delegate 0 (XnnpackBackend): segment 7 of 2`},
		{"blob past the inline data", ptetest.Method{BadBlobIndex: 1, Inline: true},
			true, `method "forward" delegate 0 (XnnpackBackend): inline blob 1 of 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.method
			m.Name, m.Backend, m.Blob = "forward", pte.XnnpackBackend, blob
			b, err := ptetest.Build(ptetest.Spec{Methods: []ptetest.Method{m}})
			require.NoError(t, err)
			_, err = openBytes(b)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}
