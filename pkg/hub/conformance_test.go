package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// jsDir holds the @huggingface/hub driver; CI runs `npm ci` there.
const jsDir = "hubtest/testdata/js"

// needNode returns the node binary, or skips (fails under EXE_EXPO_CI=1) when node or the
// installed @huggingface/hub is missing.
func needNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(jsDir, "node_modules", "@huggingface", "hub", "package.json"))
	}
	if err != nil {
		msg := "conformance needs node 20+ and `cd pkg/hub/hubtest/testdata/js && npm ci`: " + err.Error()
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// runDriver runs driver.mjs with cmd and decodes its JSON answer into out.
func runDriver(t testing.TB, node string, cmd map[string]any, out any) {
	t.Helper()
	arg, _ := json.Marshal(cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, node, "driver.mjs", string(arg))
	c.Dir = jsDir
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("node driver %s: %v\n%s", cmd["mode"], err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node driver output %q: %v", stdout.String(), err)
	}
}

type jsFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// TestConformanceWithOfficialJSClient checks hubtest against @huggingface/hub (create repo,
// upload regular, basic-LFS and multipart-LFS files, list, info, download), then checks our
// client against the same server in both directions.
func TestConformanceWithOfficialJSClient(t *testing.T) {
	node := needNode(t)
	srv := hubtest.New(t)
	srv.MultipartThreshold, srv.ChunkSize = 5<<20, 2<<20
	dir := t.TempDir()
	files := map[string][]byte{
		"README.md":                     []byte("---\nlicense: apache-2.0\n---\n# model\n"),
		"weights/model.pte":             pattern(12<<20+77, 5), // multipart: 7 parts
		"xnnpack/embedding.safetensors": pattern(3<<20, 6),     // one presigned PUT
	}
	var specs []map[string]string
	for p, b := range files {
		local := filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(local, b, 0o644); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, map[string]string{"path": p, "local": local})
	}
	var got struct {
		SecondCreate int `json:"secondCreate"`
		Upload       struct {
			Commit string `json:"commit"`
		} `json:"upload"`
		List []struct {
			Path string  `json:"path"`
			Type string  `json:"type"`
			Size int64   `json:"size"`
			LFS  *string `json:"lfs"`
		} `json:"list"`
		Exists        bool `json:"exists"`
		MissingExists bool `json:"missingExists"`
		Info          struct {
			Name     string   `json:"name"`
			SHA      string   `json:"sha"`
			Siblings []string `json:"siblings"`
		} `json:"info"`
		Listed    []string `json:"listed"`
		Downloads []jsFile `json:"downloads"`
	}
	runDriver(t, node, map[string]any{"mode": "conformance", "hubUrl": srv.URL, "token": testToken, "repo": "acme/js-upload", "files": specs}, &got)

	if got.SecondCreate != 409 {
		t.Errorf("second createRepo: status %d, want 409", got.SecondCreate)
	}
	if got.Upload.Commit != srv.Head("acme/js-upload") || got.Info.SHA != got.Upload.Commit || got.Info.Name != "acme/js-upload" {
		t.Errorf("commit %s, info %+v, head %s", got.Upload.Commit, got.Info, srv.Head("acme/js-upload"))
	}
	if !got.Exists || got.MissingExists || !slices.Contains(got.Listed, "acme/js-upload") {
		t.Errorf("exists %v, missing exists %v, listed %v", got.Exists, got.MissingExists, got.Listed)
	}
	for p, b := range files {
		var seen bool
		for _, e := range got.List {
			if e.Path == p {
				seen = true
				isLFS := e.LFS != nil && *e.LFS == sha256Hex(b)
				if e.Size != int64(len(b)) || isLFS != (p != "README.md") {
					t.Errorf("listFiles %s: %+v", p, e)
				}
			}
		}
		if !seen {
			t.Errorf("listFiles lacks %s", p)
		}
	}
	for _, d := range got.Downloads {
		if d.SHA256 != sha256Hex(files[d.Path]) {
			t.Errorf("JS download of %s: sha256 %s, want %s", d.Path, d.SHA256, sha256Hex(files[d.Path]))
		}
	}
	if count(srv, "PUT", "/part/") != 7 || count(srv, "POST", "/complete") != 1 {
		t.Errorf("JS client sent %d parts and %d completions, want 7 and 1", count(srv, "PUT", "/part/"), count(srv, "POST", "/complete"))
	}

	// Our client reads what the JS client wrote.
	c := newClient(srv, testToken)
	ctx := context.Background()
	for p, b := range files {
		d := must(c.Download(ctx, "acme/js-upload", "main", p, filepath.Join(t.TempDir(), "dl")))(t)
		if d.SHA256 != sha256Hex(b) {
			t.Errorf("our download of %s: sha256 %s", p, d.SHA256)
		}
	}

	// The JS client reads what our client wrote.
	must(c.CreateRepo(ctx, "acme/go-upload", hub.RepoOptions{}))(t)
	var add []hub.CommitFile
	for _, s := range specs {
		add = append(add, hub.CommitFile{PathInRepo: s["path"], LocalPath: s["local"]})
	}
	must(c.Commit(ctx, hub.CommitRequest{Repo: "acme/go-upload", Summary: "from Go", Add: add}))(t)
	var back []jsFile
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	runDriver(t, node, map[string]any{"mode": "download", "hubUrl": srv.URL, "token": testToken, "repo": "acme/go-upload", "paths": paths}, &back)
	for _, d := range back {
		if d.SHA256 != sha256Hex(files[d.Path]) || d.Size != int64(len(files[d.Path])) {
			t.Errorf("JS download of our %s: %+v", d.Path, d)
		}
	}
	if len(back) != len(files) {
		t.Errorf("JS downloaded %d files, want %d", len(back), len(files))
	}
}
