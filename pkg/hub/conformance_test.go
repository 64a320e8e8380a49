package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsDir holds the @huggingface/hub driver; CI runs `npm ci` there.
const jsDir = "hubtest/testdata/js"

// needNode returns the node binary of hubtest.JSClient (which skips, or fails under
// EXE_EXPO_CI=1, without it); its driver is in jsDir.
func needNode(t testing.TB) string {
	t.Helper()
	node, _ := hubtest.JSClient(t)
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

// jsConformance is the JS driver's answer in conformance mode: what @huggingface/hub saw
// of each call it made against hubtest.
type jsConformance struct {
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

// conformanceFiles are what both clients upload: a regular file, one multipart LFS file
// (7 parts) and one basic LFS file (one presigned PUT).
func conformanceFiles() map[string][]byte {
	return map[string][]byte{
		"README.md":                     []byte("---\nlicense: apache-2.0\n---\n# model\n"),
		"weights/model.pte":             pattern(12<<20+77, 5), // multipart: 7 parts
		"xnnpack/embedding.safetensors": pattern(3<<20, 6),     // one presigned PUT
	}
}

// writeSpecs writes files into a fresh folder and returns the driver's upload specs, each
// a path in the repo and the local file that holds it.
func writeSpecs(t *testing.T, files map[string][]byte) []map[string]string {
	dir := t.TempDir()
	var specs []map[string]string
	for p, b := range files {
		local := filepath.Join(dir, filepath.Base(p))
		require.NoError(t, os.WriteFile(local, b, 0o644))
		specs = append(specs, map[string]string{"path": p, "local": local})
	}
	return specs
}

// TestConformanceWithOfficialJSClient checks hubtest against @huggingface/hub (create repo,
// upload regular, basic-LFS and multipart-LFS files, list, info, download), then checks our
// client against the same server in both directions.
func TestConformanceWithOfficialJSClient(t *testing.T) {
	node := needNode(t)
	srv := hubtest.New(t)
	srv.MultipartThreshold, srv.ChunkSize = 5<<20, 2<<20
	files := conformanceFiles()
	specs := writeSpecs(t, files)
	var got jsConformance
	runDriver(t, node, map[string]any{"mode": "conformance", "hubUrl": srv.URL, "token": testToken, "repo": "acme/js-upload", "files": specs}, &got)
	checkJSConformance(t, srv, files, got)

	// Our client reads what the JS client wrote.
	c := newClient(srv, testToken)
	ctx := context.Background()
	for p, b := range files {
		d := must(c.Download(ctx, "acme/js-upload", "main", p, filepath.Join(t.TempDir(), "dl")))(t)
		assert.Equal(t, sha256Hex(b), d.SHA256, "our download of %s", p)
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
		assert.Equal(t, sha256Hex(files[d.Path]), d.SHA256, "JS download of our %s: sha256", d.Path)
		assert.Equal(t, int64(len(files[d.Path])), d.Size, "JS download of our %s: size", d.Path)
	}
	assert.Len(t, back, len(files), "JS downloaded files")
}

// checkJSConformance checks what the JS client saw of hubtest: a second create is a 409,
// the upload is the head, exists, info, list and download agree with files, and the
// multipart file went up in 7 parts and one completion.
func checkJSConformance(t *testing.T, srv *hubtest.Server, files map[string][]byte, got jsConformance) {
	assert.Equal(t, 409, got.SecondCreate, "second createRepo status")
	assert.Equal(t, srv.Head("acme/js-upload"), got.Upload.Commit, "the JS commit is not the head")
	assert.Equal(t, got.Upload.Commit, got.Info.SHA, "info's sha")
	assert.Equal(t, "acme/js-upload", got.Info.Name, "info's name")
	assert.True(t, got.Exists, "the uploaded repo does not exist")
	assert.False(t, got.MissingExists, "a missing repo exists")
	assert.Contains(t, got.Listed, "acme/js-upload")
	for p, b := range files {
		var seen bool
		for _, e := range got.List {
			if e.Path != p {
				continue
			}
			seen = true
			isLFS := e.LFS != nil && *e.LFS == sha256Hex(b)
			assert.Equal(t, int64(len(b)), e.Size, "listFiles %s: size", p)
			assert.Equal(t, p != "README.md", isLFS, "listFiles %s: %+v", p, e)
		}
		assert.True(t, seen, "listFiles lacks %s", p)
	}
	for _, d := range got.Downloads {
		assert.Equal(t, sha256Hex(files[d.Path]), d.SHA256, "JS download of %s: sha256", d.Path)
	}
	assert.Equal(t, 7, count(srv, "PUT", "/part/"), "JS client's part PUTs")
	assert.Equal(t, 1, count(srv, "POST", "/complete"), "JS client's completions")
}
