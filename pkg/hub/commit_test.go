package hub_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile puts content in a temp file and returns its path.
func writeFile(t *testing.T, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCreateRepo(t *testing.T) {
	srv := hubtest.New(t)
	c := newClient(srv, testToken)
	ctx := context.Background()
	url := must(c.CreateRepo(ctx, "org/new", hub.RepoOptions{Private: true}))(t)
	if url != srv.URL+"/org/new" {
		t.Errorf("url = %s", url)
	}
	again := must(c.CreateRepo(ctx, "org/new", hub.RepoOptions{}))(t) // exists: fine
	if again != url {
		t.Errorf("second create = %s, want %s", again, url)
	}
	if _, err := newClient(srv, "").CreateRepo(ctx, "org/anon", hub.RepoOptions{}); !errors.Is(err, hub.ErrUnauthorized) {
		t.Errorf("anonymous create: %v, want ErrUnauthorized", err)
	}
	if _, err := c.CreateRepo(ctx, "no-namespace", hub.RepoOptions{}); err == nil {
		t.Error("a repo id without namespace was accepted")
	}
	// Private: anonymous readers cannot see it.
	if _, err := newClient(srv, "").ModelInfo(ctx, "org/new", hub.InfoOptions{}); !errors.Is(err, hub.ErrRepoNotFound) {
		t.Errorf("private repo read anonymously: %v", err)
	}
}

// commitFiles are the contents TestCommit publishes: one multipart LFS file, one basic LFS
// file, a regular file from disk, and two given in memory.
type commitFiles struct {
	multi, basic, tok []byte
}

func newCommitFiles() commitFiles {
	return commitFiles{
		multi: pattern(5<<20+123, 1), // 6 parts of 1 MiB
		basic: pattern(300<<10, 2),   // one PUT (a .pte goes to LFS by name)
		tok:   []byte(`{"model": {"type": "BPE"}}`),
	}
}

// request writes the files to disk and asks to commit them on top of parent; the
// multipart file comes with its digest, as the export's report gives it.
func (f commitFiles) request(t *testing.T, parent string) hub.CommitRequest {
	multiPath := writeFile(t, "model.pte", f.multi)
	digest := must(fileutil.Hash(multiPath))(t)
	return hub.CommitRequest{
		Repo: "org/pub", Summary: "xnnpack 4k: org/src@abc", ParentCommit: parent,
		Add: []hub.CommitFile{
			{PathInRepo: "xnnpack/model-4k.pte", LocalPath: multiPath, SHA256: digest.SHA256, Size: digest.Bytes},
			{PathInRepo: "vulkan/model-4k.pte", LocalPath: writeFile(t, "b.pte", f.basic)},
			{PathInRepo: "tokenizer.json", LocalPath: writeFile(t, "tokenizer.json", f.tok)},
			{PathInRepo: "README.md", Content: []byte("---\nlicense: mit\n---\n# hi\n")},
			{PathInRepo: "empty.txt", Content: []byte{}},
		},
	}
}

// TestCommit publishes a commit with every kind of file, then checks that the same files
// again change nothing and that a folder and a file can be deleted.
func TestCommit(t *testing.T) {
	srv := hubtest.New(t)
	srv.MultipartThreshold = 2 << 20
	srv.ChunkSize = 1 << 20
	srv.Verify = true
	c := newClient(srv, testToken)
	ctx := context.Background()
	must(c.CreateRepo(ctx, "org/pub", hub.RepoOptions{}))(t)
	parent := srv.Head("org/pub")
	files := newCommitFiles()
	req := files.request(t, parent)

	res := must(c.Commit(ctx, req))(t)
	checkCommitted(t, srv, req, res, files)

	// The same files again: nothing changes, nothing is uploaded.
	puts := count(srv, "PUT", "/lfs-storage/")
	req.ParentCommit = res.OID
	_, err := c.Commit(ctx, req)
	assert.ErrorIs(t, err, hub.ErrNoChanges, "recommit of identical files")
	assert.Equal(t, puts, count(srv, "PUT", "/lfs-storage/"), "identical files were uploaded again")

	// Delete a folder and a file.
	del := must(c.Commit(ctx, hub.CommitRequest{Repo: "org/pub", Summary: "drop vulkan", ParentCommit: res.OID, Delete: []string{"vulkan/", "empty.txt"}}))(t)
	after := srv.Files("org/pub", del.OID)
	assert.NotContains(t, after, "vulkan/model-4k.pte", "after delete")
	assert.NotContains(t, after, "empty.txt", "after delete")
	_, err = c.Commit(ctx, hub.CommitRequest{Repo: "org/pub", Summary: "x", Delete: []string{"nope.txt"}})
	assert.ErrorIs(t, err, hub.ErrEntryNotFound, "deleting a missing file")
}

// checkCommitted checks the first commit of TestCommit: it is the head on top of the
// parent, holds every file with LFS for the .pte files, and uploaded those the way the
// server asked, without sending the token to the storage.
func checkCommitted(t *testing.T, srv *hubtest.Server, req hub.CommitRequest, res *hub.CommitResult, f commitFiles) {
	require.Equal(t, srv.Head("org/pub"), res.OID, "the commit is not the head")
	require.True(t, strings.HasSuffix(res.URL, "/commit/"+res.OID), "commit URL %s", res.URL)
	shas, titles := srv.History("org/pub")
	require.Len(t, shas, 2, "history %v", shas)
	assert.Equal(t, req.ParentCommit, shas[1], "the commit is not on top of its parent")
	assert.Equal(t, req.Summary, titles[0])
	want := map[string][]byte{"xnnpack/model-4k.pte": f.multi, "vulkan/model-4k.pte": f.basic, "tokenizer.json": f.tok, "empty.txt": {}}
	for path, content := range want {
		got := must(srv.FileBytes("org/pub", "main", path))(t)
		assert.True(t, bytes.Equal(content, got), "%s: stored %d bytes, want %d", path, len(got), len(content))
		_, _, lfs, _ := srv.FileInfo("org/pub", "main", path)
		assert.Equal(t, strings.HasSuffix(path, ".pte"), lfs, "%s: lfs", path)
	}
	assert.Equal(t, 6, count(srv, "PUT", "/part/"), "part PUTs")
	assert.Equal(t, 1, count(srv, "POST", "/complete"), "completions")
	assert.Equal(t, 2, count(srv, "POST", "/objects/verify"), "verify calls")
	for _, r := range srv.Requests() {
		assert.False(t, strings.HasPrefix(r.Path, "/lfs-storage/") && r.Auth, "token sent to presigned storage: %s %s", r.Method, r.Path)
	}
	slices.Sort(res.Uploaded)
	assert.Equal(t, []string{"vulkan/model-4k.pte", "xnnpack/model-4k.pte"}, res.Uploaded)
}

func TestCommitStaleParentAndRetry(t *testing.T) {
	srv := hubtest.New(t)
	c := newClient(srv, testToken)
	ctx := context.Background()
	old := srv.MustAddModel(t, "org/pub", map[string][]byte{"a.txt": []byte("a")})
	srv.MustAddModel(t, "org/pub", map[string][]byte{"b.txt": []byte("b")}) // someone else commits
	weights := writeFile(t, "w.safetensors", pattern(1<<20, 9))
	req := hub.CommitRequest{Repo: "org/pub", Summary: "publish", ParentCommit: old,
		Add: []hub.CommitFile{{PathInRepo: "w.safetensors", LocalPath: weights}, {PathInRepo: "c.txt", Content: []byte("c")}}}
	_, err := c.Commit(ctx, req)
	var he *hub.Error
	if !errors.Is(err, hub.ErrStaleParent) || !errors.As(err, &he) || he.Status != 412 || !strings.Contains(err.Error(), "re-read the head") {
		t.Fatalf("commit on a stale parent: %v, want ErrStaleParent", err)
	}
	if slices.Contains(srv.Files("org/pub", "main"), "c.txt") {
		t.Error("a rejected commit changed the branch")
	}
	puts := count(srv, "PUT", "/lfs-storage/")
	// The publisher's retry: re-read the head and commit again; the LFS object is not re-sent.
	req.ParentCommit = must(c.HeadSHA(ctx, "org/pub", "main"))(t)
	must(c.Commit(ctx, req))(t)
	if count(srv, "PUT", "/lfs-storage/") != puts {
		t.Error("the retry uploaded the LFS object again")
	}
	if !slices.Contains(srv.Files("org/pub", "main"), "c.txt") {
		t.Error("the retried commit did not land")
	}
}

func TestCommitFaults(t *testing.T) {
	tests := []struct {
		name    string
		fault   hubtest.Fault
		wantErr error
	}{
		{"part PUT 503 retried", hubtest.Fault{Method: "PUT", PathContains: "/part/2", Status: 503, Times: 2}, nil},
		{"part PUT 500 retried", hubtest.Fault{Method: "PUT", PathContains: "/part/", Status: 500}, nil},
		{"part PUT slow", hubtest.Fault{Method: "PUT", PathContains: "/part/3", Delay: 200 * time.Millisecond}, nil},
		{"part PUT cut mid-body retried", hubtest.Fault{Method: "PUT", PathContains: "/part/1", CutAfter: 1000}, nil},
		{"basic PUT cut mid-body retried", hubtest.Fault{Method: "PUT", PathContains: "?X-Amz", CutAfter: 1000}, nil},
		{"batch 429 retried", hubtest.Fault{PathContains: "objects/batch", Status: 429, RetryAfter: "0"}, nil},
		{"commit 500 not retried", hubtest.Fault{PathContains: "/commit/main", Status: 500}, hub.ErrServer},
		{"preupload 403", hubtest.Fault{PathContains: "/preupload/", Status: 403, Times: -1}, hub.ErrForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MultipartThreshold, srv.ChunkSize = 1<<20, 256<<10
			c := newClient(srv, testToken)
			ctx := context.Background()
			must(c.CreateRepo(ctx, "org/pub", hub.RepoOptions{}))(t)
			f := srv.Inject(tc.fault)
			content := pattern(1<<20+5, 4)
			if strings.HasPrefix(tc.name, "basic") {
				content = content[:500<<10] // under the multipart threshold
			}
			_, err := c.Commit(ctx, hub.CommitRequest{Repo: "org/pub", Summary: "s",
				Add: []hub.CommitFile{{PathInRepo: "m.pte", LocalPath: writeFile(t, "m.pte", content)}}})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if f.Hits() != 1 && tc.wantErr == hub.ErrServer {
					t.Errorf("commit POST sent %d times, want once", f.Hits())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := must(srv.FileBytes("org/pub", "main", "m.pte"))(t); string(got) != string(content) {
				t.Error("stored content differs")
			}
			if f.Hits() != max(tc.fault.Times, 1) {
				t.Errorf("fault hit %d times", f.Hits())
			}
		})
	}
}

func TestCommitRejectsBadInput(t *testing.T) {
	srv := hubtest.New(t)
	c := newClient(srv, testToken)
	ctx := context.Background()
	must(c.CreateRepo(ctx, "org/pub", hub.RepoOptions{}))(t)
	p := writeFile(t, "x.bin", []byte("12345"))
	tests := []struct {
		name string
		req  hub.CommitRequest
		want string
	}{
		{"no summary", hub.CommitRequest{Repo: "org/pub", Add: []hub.CommitFile{{PathInRepo: "a", Content: []byte("a")}}}, "summary"},
		{"size mismatch", hub.CommitRequest{Repo: "org/pub", Summary: "s", Add: []hub.CommitFile{{PathInRepo: "x.bin", LocalPath: p, Size: 9}}}, "the report says 9"},
		{"two sources", hub.CommitRequest{Repo: "org/pub", Summary: "s", Add: []hub.CommitFile{{PathInRepo: "x.bin", LocalPath: p, Content: []byte("x")}}}, "not both"},
		{"wrong sha", hub.CommitRequest{Repo: "org/pub", Summary: "s", Add: []hub.CommitFile{{PathInRepo: "x.bin", LocalPath: p, SHA256: strings.Repeat("0", 64)}}}, "BadDigest"},
		{"missing repo", hub.CommitRequest{Repo: "org/none", Summary: "s", Add: []hub.CommitFile{{PathInRepo: "a", Content: []byte("a")}}}, "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Commit(ctx, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			noToken(t, err)
		})
	}
}
