package report

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
)

func TestWriteIsAtomicAndReadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "xnnpack", Name("4k"))
	r := &Report{Backend: "xnnpack", Window: Window{Context: 4096}, Files: []File{{Path: "xnnpack/a.pte", Bytes: 3, SHA256: "ab"}}}
	require.NoError(t, Write(path, r))
	back, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, 4096, back.Window.Context)
	assert.Equal(t, r.Files, back.Files)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file was left behind")
	assert.Equal(t, "export-report-4k.json", entries[0].Name())
	// a file in the way makes the write fail without touching the old report
	require.Error(t, Write(filepath.Join(path, "x"), r))
	again, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, back, again)
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

// TestReadRefusesAnotherSchema: Write stamps the schema version, and Read refuses a report
// of another version or of none, by name, so publish never sends a report it misreads.
func TestReadRefusesAnotherSchema(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export-report-2k.json")
	require.NoError(t, Write(path, &Report{Backend: "xnnpack"}))
	r, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, SchemaVersion, r.SchemaVersion)

	for body, says := range map[string]string{
		`{"schema_version": 2, "backend": "xnnpack"}`: "is an exe-expo export report of schema 2, and this exe-expo reads schema 1 only",
		`{"backend": "xnnpack"}`:                      "has no schema_version",
	} {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		_, err := Read(path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), path+" "+says)
	}
}
