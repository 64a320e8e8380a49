package hub

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/golden"
)

// TestCommitWireFormat pins the NDJSON commit body byte for byte: header first, regular
// files base64-encoded (streamed from disk), lfsFile pointers, then deletions.
func TestCommitWireFormat(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "config.json")
	if err := os.WriteFile(local, []byte(`{"backend":"xnnpack"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	req := CommitRequest{Repo: "org/m", Summary: "xnnpack 4k: Qwen/Qwen3-0.6B@0123456789ab", Description: "", ParentCommit: "f2b4c5c3571913374d1daab96cf559adebd63fdf",
		Delete: []string{"xnnpack/export-report.json", "old/"}}
	files := []plannedFile{
		{CommitFile: CommitFile{PathInRepo: "xnnpack/config.json", LocalPath: local, Size: 21}},
		{CommitFile: CommitFile{PathInRepo: "README.md", Content: []byte("---\nlicense: mit\n---\n")}},
		{CommitFile: CommitFile{PathInRepo: "empty.txt", Content: []byte{}}},
		{CommitFile: CommitFile{PathInRepo: "xnnpack/m-4k.pte", Size: 123456789, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}, lfs: true},
	}
	var got bytes.Buffer
	if err := writeNDJSON(&got, req, files); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "commit.ndjson"), got.Bytes())
}
