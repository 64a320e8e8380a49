package ptetest

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
	"testing"
)

func TestLayout(t *testing.T) {
	spec, err := LLM{Backend: "xnnpack", WeightsSize: 1000, BlobSize: 300,
		Metadata: ExportLLMMetadata(64, 64, 1, []int64{2})}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, hl := range []int{32, 24} {
		spec.HeaderLength = hl
		b, err := Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		size, err := Size(spec)
		if err != nil || size != int64(len(b)) {
			t.Fatalf("Size %d (%v), built %d bytes", size, err, len(b))
		}
		le := binary.LittleEndian
		if string(b[4:8]) != "ET12" || string(b[8:12]) != "eh00" || le.Uint32(b[12:]) != uint32(hl) {
			t.Fatalf("prefix % x", b[:16])
		}
		progSize, base := le.Uint64(b[16:]), le.Uint64(b[24:])
		if base%128 != 0 || base < progSize || base-progSize >= 128 {
			t.Errorf("program %d bytes, segment base %d: want the next multiple of 128", progSize, base)
		}
		if hl == 32 && le.Uint64(b[32:]) != uint64(len(b))-base {
			t.Errorf("segment_data_size %d, want %d", le.Uint64(b[32:]), uint64(len(b))-base)
		}
		if hl == 24 && le.Uint64(b[32:]) != 0 {
			t.Errorf("24-byte header has bytes in the segment_data_size slot")
		}
		if !bytes.Contains(b[base:], []byte("XH00")) {
			t.Error("no XNNPACK blob in the segment data")
		}
	}
}

func TestSpecErrors(t *testing.T) {
	if _, err := (LLM{Backend: "coreml"}).Spec(); err == nil {
		t.Error("LLM accepted backend coreml")
	}
	if _, err := (QNN{Mode: "lookahead"}).Spec(); err == nil {
		t.Error("QNN accepted mode lookahead")
	}
	if _, err := (MediaTekChunk{Exp: "e", PromptTokens: 128, Window: 64}).Spec(); err == nil {
		t.Error("MediaTek accepted a window below the prompt length")
	}
	if _, err := Build(Spec{HeaderLength: -1, NamedData: []Named{{Key: "k", Blob: Blob{Size: 1}}}}); err == nil {
		t.Error("built named data without a header")
	}
	if _, err := Build(Spec{Metadata: []Meta{{Name: "x", Value: map[string]int{}}}}); err == nil {
		t.Error("built a map-valued metadata method")
	}
	if _, err := Build(Spec{NamedData: []Named{{Key: "big", Blob: Blob{Size: 1 << 30}}}}); err == nil {
		t.Error("Build held a 1 GiB file in memory")
	}
}

// TestWriteFileSparse checks that a 3 GiB segment costs (almost) no disk.
func TestWriteFileSparse(t *testing.T) {
	path := t.TempDir() + "/big.pte"
	spec, _ := LLM{Backend: "vulkan", WeightsSize: 3 << 30}.Spec()
	if err := WriteFile(path, spec); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 3<<30 {
		t.Errorf("size %d, want over 3 GiB", st.Size())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Blocks*512 > 16<<20 {
		t.Errorf("file uses %d bytes of disk, want it sparse", sys.Blocks*512)
	}
}
