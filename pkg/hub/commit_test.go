package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/fileutil"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
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

func TestCommit(t *testing.T) {
	srv := hubtest.New(t)
	srv.MultipartThreshold = 2 << 20
	srv.ChunkSize = 1 << 20
	srv.Verify = true
	c := newClient(srv, testToken)
	ctx := context.Background()
	must(c.CreateRepo(ctx, "org/pub", hub.RepoOptions{}))(t)
	parent := srv.Head("org/pub")

	multi := pattern(5<<20+123, 1) // 6 parts of 1 MiB
	basic := pattern(300<<10, 2)   // one PUT (a .pte goes to LFS by name)
	tok := []byte(`{"model": {"type": "BPE"}}`)
	multiPath := writeFile(t, "model.pte", multi)
	digest := must(fileutil.Hash(multiPath))(t)
	sha, size := digest.SHA256, digest.Bytes
	req := hub.CommitRequest{
		Repo: "org/pub", Summary: "xnnpack 4k: org/src@abc", ParentCommit: parent,
		Add: []hub.CommitFile{
			{PathInRepo: "xnnpack/model-4k.pte", LocalPath: multiPath, SHA256: sha, Size: size},
			{PathInRepo: "vulkan/model-4k.pte", LocalPath: writeFile(t, "b.pte", basic)},
			{PathInRepo: "tokenizer.json", LocalPath: writeFile(t, "tokenizer.json", tok)},
			{PathInRepo: "README.md", Content: []byte("---\nlicense: mit\n---\n# hi\n")},
			{PathInRepo: "empty.txt", Content: []byte{}},
		},
	}
	res := must(c.Commit(ctx, req))(t)
	if res.OID != srv.Head("org/pub") || !strings.HasSuffix(res.URL, "/commit/"+res.OID) {
		t.Fatalf("commit %+v, head %s", res, srv.Head("org/pub"))
	}
	shas, titles := srv.History("org/pub")
	if len(shas) != 2 || shas[1] != parent || titles[0] != req.Summary {
		t.Errorf("history %v %v, want the commit on top of %s", shas, titles, parent)
	}
	want := map[string][]byte{"xnnpack/model-4k.pte": multi, "vulkan/model-4k.pte": basic, "tokenizer.json": tok, "empty.txt": {}}
	for path, content := range want {
		got := must(srv.FileBytes("org/pub", "main", path))(t)
		if string(got) != string(content) {
			t.Errorf("%s: stored %d bytes, want %d", path, len(got), len(content))
		}
		_, _, lfs, _ := srv.FileInfo("org/pub", "main", path)
		if lfs != strings.HasSuffix(path, ".pte") {
			t.Errorf("%s: lfs = %v", path, lfs)
		}
	}
	if n := count(srv, "PUT", "/part/"); n != 6 {
		t.Errorf("%d part PUTs, want 6", n)
	}
	if n := count(srv, "POST", "/complete"); n != 1 {
		t.Errorf("%d completions, want 1", n)
	}
	if n := count(srv, "POST", "/objects/verify"); n != 2 {
		t.Errorf("%d verify calls, want 2", n)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Path, "/lfs-storage/") && r.Auth {
			t.Errorf("token sent to presigned storage: %s %s", r.Method, r.Path)
		}
	}
	slices.Sort(res.Uploaded)
	if !slices.Equal(res.Uploaded, []string{"vulkan/model-4k.pte", "xnnpack/model-4k.pte"}) {
		t.Errorf("uploaded %v", res.Uploaded)
	}

	// The same files again: nothing changes, nothing is uploaded.
	puts := count(srv, "PUT", "/lfs-storage/")
	req.ParentCommit = res.OID
	_, err := c.Commit(ctx, req)
	if !errors.Is(err, hub.ErrNoChanges) {
		t.Errorf("recommit of identical files: %v, want ErrNoChanges", err)
	}
	if count(srv, "PUT", "/lfs-storage/") != puts {
		t.Error("identical files were uploaded again")
	}

	// Delete a folder and a file.
	del := must(c.Commit(ctx, hub.CommitRequest{Repo: "org/pub", Summary: "drop vulkan", ParentCommit: res.OID, Delete: []string{"vulkan/", "empty.txt"}}))(t)
	if files := srv.Files("org/pub", del.OID); slices.Contains(files, "vulkan/model-4k.pte") || slices.Contains(files, "empty.txt") {
		t.Errorf("after delete: %v", files)
	}
	if _, err := c.Commit(ctx, hub.CommitRequest{Repo: "org/pub", Summary: "x", Delete: []string{"nope.txt"}}); !errors.Is(err, hub.ErrEntryNotFound) {
		t.Errorf("deleting a missing file: %v, want ErrEntryNotFound", err)
	}
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
