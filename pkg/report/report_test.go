package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/check"
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

// TestStructuralCheckField pins the report's key for the structural check: readers (the
// step summary, verify, publish) look it up by this name, and "smoke" would claim a run
// that never happened.
func TestStructuralCheckField(t *testing.T) {
	r := &Report{StructuralCheck: []check.Result{{Passed: true}}}
	path := filepath.Join(t.TempDir(), Name("2k"))
	require.NoError(t, Write(path, r))
	var raw map[string]json.RawMessage
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Contains(t, raw, "structural_check")
	assert.NotContains(t, raw, "smoke")
	back, err := Read(path)
	require.NoError(t, err)
	require.Len(t, back.StructuralCheck, 1)
	assert.True(t, back.StructuralCheck[0].Passed)
}

// TestFileErrorsAreSentences checks that a failed file operation names its path once, with
// the cause, and still matches the cause for errors.Is.
func TestFileErrorsAreSentences(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o644))
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name string
		err  func() error
		want string
		is   error
	}{
		{"read a missing report", func() error { _, err := Read(missing); return err },
			"cannot read " + missing + ": no such file or directory", fs.ErrNotExist},
		{"write under a file", func() error { return Write(filepath.Join(blocker, "x", "r.json"), &Report{}) },
			"cannot create " + filepath.Join(blocker, "x") + ": not a directory", nil},
		{"place a missing file", func() error { _, err := Place(missing, filepath.Join(dir, "out", "a.pte")); return err },
			"cannot open " + missing + ": no such file or directory", fs.ErrNotExist},
		{"hash a missing file", func() error { _, err := HashFile(missing); return err },
			"cannot open " + missing + ": no such file or directory", fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}
