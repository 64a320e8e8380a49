package report

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteIsAtomicAndReadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "xnnpack", Name("4k"))
	r := &Report{Backend: "xnnpack", Window: Window{Context: 4096}, Files: []File{{Path: "xnnpack/a.pte", Bytes: 3, SHA256: "ab"}}}
	if err := Write(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil || back.Window.Context != 4096 || back.Files[0].SHA256 != "ab" {
		t.Fatalf("read back %+v, %v", back, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 || entries[0].Name() != "export-report-4k.json" {
		t.Errorf("left behind: %v", entries)
	}
	// a folder in the way makes the write fail without touching the old report
	if err := Write(filepath.Join(path, "x"), r); err == nil {
		t.Error("write under a file succeeded")
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing report: %v", err)
	}
}

func TestPlaceHashesOnce(t *testing.T) {
	dir := t.TempDir()
	data := []byte(strings.Repeat("exe-expo ", 100_000))
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	src := filepath.Join(dir, "tool", "out.pte")
	os.MkdirAll(filepath.Dir(src), 0o755)
	os.WriteFile(src, data, 0o644)
	f, err := Place(src, filepath.Join(dir, "out", "xnnpack", "a.pte"))
	if err != nil {
		t.Fatal(err)
	}
	if f.SHA256 != want || f.Bytes != int64(len(data)) {
		t.Errorf("placed %+v, want %s", f, want)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Error("the source was not moved")
	}
	// across file systems Place copies and hashes in one pass; /dev/shm is another mount
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "report")
		if err == nil {
			defer os.RemoveAll(shm)
			src2 := filepath.Join(shm, "b.pte")
			os.WriteFile(src2, data, 0o644)
			f, err := Place(src2, filepath.Join(dir, "out", "b.pte"))
			if err != nil || f.SHA256 != want {
				t.Errorf("copy: %+v %v", f, err)
			}
		}
	}
	if _, err := Place(filepath.Join(dir, "nope"), filepath.Join(dir, "x")); err == nil {
		t.Error("placing a missing file succeeded")
	}
}
