package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// TestOfficialJSClientDownloadsWhatWasExported publishes windows of two backends, then has
// the official JavaScript client list the repo and download every file: each file a report
// lists comes back with the report's sha256 and size, so what the app downloads is what
// was exported.
func TestOfficialJSClientDownloadsWhatWasExported(t *testing.T) {
	node, jsDir := hubtest.JSClient(t)
	srv, c := newHub(t)
	ctx := context.Background()
	want := map[string]string{}
	sizes := map[string]int64{}
	for _, w := range []win{{backend: "xnnpack", window: 2048, seed: 1}, {backend: "xnnpack", window: 4096, seed: 2}, {backend: "mediatek", chip: "MT6991", window: 2048, seed: 3}} {
		dir := t.TempDir()
		rp := writeWindow(t, dir, w)
		loaded, err := Load(dir, rp, "")
		require.NoError(t, err)
		_, err = Publish(ctx, loaded, Options{Client: c, Wait: noWait})
		require.NoError(t, err)
		for _, f := range loaded.Report.Files {
			want[f.Path], sizes[f.Path] = f.SHA256, f.Bytes
		}
	}
	arg, err := json.Marshal(map[string]any{"mode": "fetch", "hubUrl": srv.URL, "token": "hf_test", "repo": testRepo})
	require.NoError(t, err)
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(tctx, node, "driver.mjs", string(arg))
	cmd.Dir = jsDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var got []struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	listed := map[string]bool{}
	for _, f := range got {
		listed[f.Path] = true
		if sha, ok := want[f.Path]; ok {
			assert.Equal(t, sha, f.SHA256, f.Path)
			assert.Equal(t, sizes[f.Path], f.Size, f.Path)
		}
	}
	for p := range want {
		assert.True(t, listed[p], "the JS client does not list %s", p)
	}
	for _, p := range []string{"README.md", "tokenizer.json", "LICENSE", "xnnpack/config.json", "mtk/mt6991/config.json"} {
		assert.True(t, listed[p], "the JS client does not list %s", p)
	}
}
