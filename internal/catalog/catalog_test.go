package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

const (
	org         = "experimentalmachines"
	catalogRepo = org + "/exe-expo-catalog"
)

// configJSON is a folder config.json as internal/publish writes it, for window w.
func configJSON(backend, target string, windows ...int) []byte {
	c := map[string]any{"runtime": "executorch", "runtime_version": "1.4.0", "backend": backend, "target": nil,
		"source_model": "Qwen/Qwen3-0.6B", "source_revision": "abc"}
	var vs []map[string]any
	for _, w := range windows {
		v := map[string]any{"context": w, "source_revision": "abc", "quantization": "8da4w", "size_bytes": 1000 + w,
			"device_resident_bytes": 5000 + w, "fits_phones_gib": []int{8, 16}}
		if target == "" {
			v["file"], v["sha256"] = fmt.Sprintf("m-%d.pte", w), fmt.Sprintf("%064x", w)
			v["kv_cache"] = map[bool]string{false: "fp32", true: "int8"}[w >= 4096]
			c["phones_by_kv_cache"] = map[string]any{"fp32": []map[string]any{{"ram_gib": 8, "app_bytes": 1, "window": 2048}},
				"int8": []map[string]any{{"ram_gib": 8, "app_bytes": 1, "window": 4096}}}
		} else {
			c["target"] = target
			c["neuropilot_sdk"] = map[string]any{"name": "NeuroPilot Express SDK", "build": "8.0.8"}
			v["files"] = []string{"c1.pte", "c2.pte"}
			v["embedding"] = "emb.bin"
			v["sha256"] = map[string]string{"c1.pte": "aa", "c2.pte": "bb", "emb.bin": "cc"}
		}
		vs = append(vs, v)
	}
	c["variants"] = vs
	b, _ := json.MarshalIndent(c, "", "  ")
	return b
}

func client(url string) *hub.Client {
	return hub.New(hub.Options{Endpoint: url, Token: "hf_test", RetryMax: 3, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
}

// TestUpdateRebuildCheck: publish's update puts a repo's folders in the catalog; the same
// update again commits nothing; a rebuild finds every repo of the org; check names a
// folder the catalog misses; the catalog's file refuses another schema.
func TestUpdateRebuildCheck(t *testing.T) {
	srv := hubtest.New(t)
	ctx := context.Background()
	c := client(srv.URL)
	a, b := org+"/Qwen3-0.6B-ExecuTorch", org+"/SmolLM2-135M-Instruct-ExecuTorch"
	srv.MustAddModel(t, a, map[string][]byte{"xnnpack/config.json": configJSON("xnnpack", "", 2048, 4096), "README.md": []byte("card")})
	srv.MustAddModel(t, b, map[string][]byte{"mtk/mt6991/config.json": configJSON("mediatek", "mt6991", 2048)})

	changed, err := Update(ctx, c, catalogRepo, org, a, Options{})
	require.NoError(t, err)
	assert.True(t, changed)
	head := srv.Head(catalogRepo)
	changed, err = Update(ctx, c, catalogRepo, org, a, Options{})
	require.NoError(t, err)
	assert.False(t, changed, "an unchanged repo makes no catalog commit")
	assert.Equal(t, head, srv.Head(catalogRepo))

	data, err := srv.FileBytes(catalogRepo, "main", File)
	require.NoError(t, err)
	cat, err := Decode(File, data)
	require.NoError(t, err)
	require.Contains(t, cat.Models, a)
	f := cat.Models[a].Folders["xnnpack"]
	require.NotNil(t, f)
	assert.Equal(t, Runtime{ExecuTorch: "1.4.0"}, f.Runtime)
	require.Len(t, f.Windows, 2)
	assert.Equal(t, []FileEntry{{Path: "xnnpack/m-2048.pte", SHA256: fmt.Sprintf("%064x", 2048), SizeBytes: 3048}}, f.Windows[0].Files)
	assert.Equal(t, int64(7048), f.Windows[0].ResidentBytes)
	assert.Equal(t, []int{8, 16}, f.Windows[0].FitsPhonesGiB)
	assert.Equal(t, "fp32", f.Windows[0].KVCache, "which cache each window keeps, from config.json")
	assert.Equal(t, "int8", f.Windows[1].KVCache)
	assert.JSONEq(t, `{"fp32": [{"ram_gib": 8, "app_bytes": 1, "window": 2048}], "int8": [{"ram_gib": 8, "app_bytes": 1, "window": 4096}]}`,
		string(f.PhonesByCache), "the phone table per cache, as config.json gives it")
	assert.Equal(t, "Qwen/Qwen3-0.6B", cat.Models[a].Source)

	diffs, err := Check(ctx, c, cat, catalogRepo)
	require.NoError(t, err)
	assert.Equal(t, []string{b + " is published but not in the catalog"}, diffs)

	rebuilt, err := Rebuild(ctx, c, org, catalogRepo)
	require.NoError(t, err)
	require.Contains(t, rebuilt.Models, b)
	m := rebuilt.Models[b].Folders["mtk/mt6991"]
	assert.Equal(t, Runtime{ExecuTorch: "1.4.0", NeuroPilotSDK: "8.0.8"}, m.Runtime)
	assert.Equal(t, []FileEntry{{Path: "mtk/mt6991/c1.pte", SHA256: "aa"}, {Path: "mtk/mt6991/c2.pte", SHA256: "bb"}, {Path: "mtk/mt6991/emb.bin", SHA256: "cc"}}, m.Windows[0].Files)
	_, err = Write(ctx, c, catalogRepo, rebuilt, Options{})
	require.NoError(t, err)
	data, err = srv.FileBytes(catalogRepo, "main", File)
	require.NoError(t, err)
	cat, err = Decode(File, data)
	require.NoError(t, err)
	diffs, err = Check(ctx, c, cat, catalogRepo)
	require.NoError(t, err)
	assert.Empty(t, diffs)

	_, err = Decode(File, []byte(`{"schema_version": 2, "org": "x", "models": {}}`))
	var ve *result.VersionError
	assert.True(t, errors.As(err, &ve), "%v", err)
}

// TestUpdateUnderContention: every window of a matrix publishes at once and each updates
// the catalog for its repo, through lost answers and 500s: the catalog ends holding every
// repo, each update either committed or found its entry already in place.
func TestUpdateUnderContention(t *testing.T) {
	srv := hubtest.New(t)
	ctx := context.Background()
	const n = 12
	repos := make([]string, n)
	for i := range repos {
		repos[i] = fmt.Sprintf("%s/M%d-ExecuTorch", org, i)
		srv.MustAddModel(t, repos[i], map[string][]byte{"xnnpack/config.json": configJSON("xnnpack", "", 2048+i)})
	}
	// the catalog repo exists before the race, as after a first publish
	_, err := client(srv.URL).CreateRepo(ctx, catalogRepo, hub.RepoOptions{})
	require.NoError(t, err)
	srv.Inject(hubtest.Fault{Method: "POST", PathContains: "exe-expo-catalog/commit/", Status: 500, Times: 2})
	srv.Inject(hubtest.Fault{Method: "POST", PathContains: "exe-expo-catalog/commit/", LoseAnswer: true, Times: 3})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range repos {
		c := client(srv.URL)
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		var mu sync.Mutex
		wait := func(int) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return time.Duration(rng.IntN(2000)) * time.Microsecond
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Update(ctx, c, catalogRepo, org, repos[i], Options{Attempts: 6, Wait: wait})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, repos[i])
	}
	data, err := srv.FileBytes(catalogRepo, "main", File)
	require.NoError(t, err)
	cat, err := Decode(File, data)
	require.NoError(t, err)
	for i, r := range repos {
		require.Contains(t, cat.Models, r)
		assert.Equal(t, 2048+i, cat.Models[r].Folders["xnnpack"].Windows[0].Context)
	}
	assert.Len(t, cat.Models, n)
}

// TestOfficialJSClientReadsTheCatalog: the official JavaScript client downloads and parses
// catalog.json as the app would, and sees the catalog publish wrote.
func TestOfficialJSClientReadsTheCatalog(t *testing.T) {
	node, jsDir := hubtest.JSClient(t)
	srv := hubtest.New(t)
	ctx := context.Background()
	repo := org + "/Qwen3-0.6B-ExecuTorch"
	srv.MustAddModel(t, repo, map[string][]byte{"xnnpack/config.json": configJSON("xnnpack", "", 2048)})
	_, err := Update(ctx, client(srv.URL), catalogRepo, org, repo, Options{})
	require.NoError(t, err)
	data, err := srv.FileBytes(catalogRepo, "main", File)
	require.NoError(t, err)
	var want any
	require.NoError(t, json.Unmarshal(data, &want))

	arg, err := json.Marshal(map[string]any{"mode": "json", "hubUrl": srv.URL, "token": "hf_test", "repo": catalogRepo, "path": File})
	require.NoError(t, err)
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(tctx, node, "driver.mjs", string(arg))
	cmd.Dir = jsDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var got any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	assert.Equal(t, want, got)
	assert.Contains(t, stdout.String(), `"schema_version":1`)
}

// TestCheckComparesEveryFolderField: --check finds a catalog whose folder entry differs from
// the repo's config.json in any one thing the app reads (a file's path, sha256 or size, the
// runtime, a window's figures, a window more or less) and only in those: the same entry,
// and one that keeps older runtimes a rebuild cannot see, agree (docs/research/bounds.md).
func TestCheckComparesEveryFolderField(t *testing.T) {
	srv := hubtest.New(t)
	ctx := context.Background()
	c := client(srv.URL)
	repo := org + "/Qwen3-0.6B-ExecuTorch"
	srv.MustAddModel(t, repo, map[string][]byte{"xnnpack/config.json": configJSON("xnnpack", "", 2048, 4096)})
	rebuilt, err := Rebuild(ctx, c, org, catalogRepo)
	require.NoError(t, err)
	enc, err := rebuilt.Encode()
	require.NoError(t, err)
	differs := []string{repo + "/xnnpack in the catalog differs from the repo's config.json"}
	tests := []struct {
		name string
		edit func(f *Folder)
		want []string
	}{
		{"the same entry", func(*Folder) {}, nil},
		{"older runtimes kept", func(f *Folder) {
			old := *f
			old.Runtime.ExecuTorch += "-older"
			f.Older = []*Folder{&old}
		}, nil},
		{"a file's path", func(f *Folder) { f.Windows[0].Files[0].Path = "xnnpack/other.pte" }, differs},
		{"a file's sha256, one digit", func(f *Folder) {
			sha := f.Windows[0].Files[0].SHA256
			if n := len(sha); n > 0 { // a catalog that lost the hash still gets one to differ by
				f.Windows[0].Files[0].SHA256 = sha[:n-1] + string(sha[n-1]^1)
			} else {
				f.Windows[0].Files[0].SHA256 = "0"
			}
		}, differs},
		{"a file's size, one byte", func(f *Folder) { f.Windows[1].Files[0].SizeBytes++ }, differs},
		{"a file more", func(f *Folder) {
			f.Windows[0].Files = append(f.Windows[0].Files, FileEntry{Path: "xnnpack/extra.pte", SHA256: "ab"})
		}, differs},
		{"the ExecuTorch runtime", func(f *Folder) { f.Runtime.ExecuTorch += "-other" }, differs},
		{"a QAIRT runtime", func(f *Folder) { f.Runtime.QAIRT = "2.37" }, differs},
		{"a window less", func(f *Folder) { f.Windows = f.Windows[:1] }, differs},
		{"a window more", func(f *Folder) { f.Windows = append(f.Windows, Window{Context: 8192, Files: []FileEntry{}}) }, differs},
		{"a window's context", func(f *Folder) { f.Windows[1].Context = 8192 }, differs},
		{"a window's resident bytes", func(f *Folder) { f.Windows[0].ResidentBytes++ }, differs},
		{"a window's quantization", func(f *Folder) { f.Windows[0].Quantization = "fp32" }, differs},
		{"the revision read", func(f *Folder) { f.Revision = "0000000000000000000000000000000000000000" }, differs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := Decode(File, enc)
			require.NoError(t, err)
			f := cat.Models[repo].Folders["xnnpack"]
			require.Len(t, f.Windows, 2, "the precondition: the entry as rebuilt")
			tc.edit(f)
			diffs, err := Check(ctx, c, cat, catalogRepo)
			require.NoError(t, err)
			assert.Equal(t, tc.want, diffs)
		})
	}
}

// TestLoadsOn: each folder says which runtimes load its files without a warning, derived from
// its runtime, also when the catalog was written before the field existed; a folder built
// for a release the pipeline has left is stale.
func TestLoadsOn(t *testing.T) {
	c := New(org)
	require.NoError(t, c.SetModel(org+"/Qwen3-0.6B-ExecuTorch", "r1", map[string][]byte{"xnnpack": configJSON("xnnpack", "", 2048)}))
	f := c.Models[org+"/Qwen3-0.6B-ExecuTorch"].Folders["xnnpack"]
	assert.Equal(t, "1.4.0 to 1.5.x", f.LoadsOn.String())
	b, err := c.Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"loads_on": {
            "from": "1.4.0",
            "before": "1.6.0"
          },`)

	old := bytes.ReplaceAll(b, []byte(`"loads_on"`), []byte(`"loads_on_unknown"`))
	d, err := Decode("old.json", old)
	require.NoError(t, err)
	assert.Equal(t, f.LoadsOn, d.Models[org+"/Qwen3-0.6B-ExecuTorch"].Folders["xnnpack"].LoadsOn, "derived on read")

	stale := c.Stale(func(string) Runtime { return Runtime{ExecuTorch: "1.5.1"} })
	require.Len(t, stale, 1)
	assert.Equal(t, org+"/Qwen3-0.6B-ExecuTorch/xnnpack was built for ExecuTorch 1.4.0; the pipeline builds for ExecuTorch 1.5.1 now: due for a rebuild (watch queues it)", stale[0].String())
	assert.Empty(t, c.Stale(func(string) Runtime { return Runtime{ExecuTorch: "1.4.0"} }))
}
