package publish

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func fileList(st repoState) []string {
	var out []string
	for p := range st.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestFirstPublishIntoEmptyRepo(t *testing.T) {
	srv, c := newHub(t)
	dir := t.TempDir()
	rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
	res, err := publishDir(context.Background(), c, dir, rp)
	require.NoError(t, err)
	assert.False(t, res.NoOp)
	assert.NotEmpty(t, res.OID)
	st := readRepo(t, srv, testRepo)
	assert.Equal(t, res.OID, st.head)
	assert.Equal(t, []string{".gitattributes", "LICENSE", "README.md", "tokenizer.json",
		"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte", "xnnpack/config.json", "xnnpack/export-report-4k.json"}, fileList(st))
	checkConsistent(t, st)
	_, titles := srv.History(testRepo)
	require.Len(t, titles, 2)
	assert.Equal(t, "xnnpack 4k: "+testModel+"@a10cc1512eab", titles[0])
	var cfg BackendConfig
	require.NoError(t, json.Unmarshal(st.files["xnnpack/config.json"], &cfg))
	require.Len(t, cfg.Variants, 1)
	assert.Equal(t, "SmolLM2-360M-Instruct-8da4w-4k.pte", cfg.Variants[0].File)
	assert.Equal(t, 4096, cfg.Variants[0].Context)
	assert.Nil(t, cfg.Target)
}

func TestSecondWindowBesideTheFirst(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	_, err := publishDir(ctx, c, a, writeWindow(t, a, win{backend: "xnnpack", window: 4096, seed: 1}))
	require.NoError(t, err)
	before := readRepo(t, srv, testRepo)
	_, err = publishDir(ctx, c, b, writeWindow(t, b, win{backend: "xnnpack", window: 2048, seed: 2}))
	require.NoError(t, err)
	after := readRepo(t, srv, testRepo)
	for _, p := range []string{"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte", "xnnpack/export-report-4k.json"} {
		assert.Equal(t, before.files[p], after.files[p], "%s must be untouched", p)
	}
	reports := checkConsistent(t, after)
	assert.Len(t, reports, 2)
	var cfg BackendConfig
	require.NoError(t, json.Unmarshal(after.files["xnnpack/config.json"], &cfg))
	require.Len(t, cfg.Variants, 2)
	assert.Equal(t, []int{2048, 4096}, []int{cfg.Variants[0].Context, cfg.Variants[1].Context}, "smallest window first")
	card := string(after.files["README.md"])
	assert.Contains(t, card, "XNNPACK (CPU) at 2k to 4k")
	assert.Contains(t, card, "[`xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte`]")
}

func TestRepublishingIsANoOp(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	dir := t.TempDir()
	rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
	_, err := publishDir(ctx, c, dir, rp)
	require.NoError(t, err)
	shas, _ := srv.History(testRepo)
	res, err := publishDir(ctx, c, dir, rp)
	require.NoError(t, err)
	assert.True(t, res.NoOp)
	assert.Empty(t, res.OID)
	again, _ := srv.History(testRepo)
	assert.Equal(t, shas, again, "no commit")
}

func TestReexportReplacesOnlyItsWindow(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	a, b, d := t.TempDir(), t.TempDir(), t.TempDir()
	_, err := publishDir(ctx, c, a, writeWindow(t, a, win{backend: "mediatek", chip: "MT6991", window: 2048, seed: 1}))
	require.NoError(t, err)
	_, err = publishDir(ctx, c, b, writeWindow(t, b, win{backend: "mediatek", chip: "MT6991", window: 4096, seed: 2}))
	require.NoError(t, err)
	before := readRepo(t, srv, testRepo)
	// The 2k window exported again with other bytes (and the shared embedding with it).
	_, err = publishDir(ctx, c, d, writeWindow(t, d, win{backend: "mediatek", chip: "MT6991", window: 2048, seed: 3}))
	require.NoError(t, err)
	after := readRepo(t, srv, testRepo)
	checkConsistent(t, after)
	for p := range before.files {
		if strings.Contains(p, "-4k-") || strings.HasSuffix(p, "-4k.json") {
			assert.Equal(t, before.files[p], after.files[p], "%s is of another window", p)
		}
		if strings.Contains(p, "-2k-chunk") {
			assert.NotEqual(t, before.files[p], after.files[p], "%s is the re-exported window", p)
		}
	}
	var cfg BackendConfig
	require.NoError(t, json.Unmarshal(after.files["mtk/mt6991/config.json"], &cfg))
	require.NotNil(t, cfg.Target)
	assert.Equal(t, "mt6991", *cfg.Target)
	require.NotNil(t, cfg.NeuroPilotSDK)
	require.Len(t, cfg.Variants, 2)
	v := cfg.Variants[0]
	assert.Equal(t, []string{"SmolLM2-360M-Instruct-neuropilot-a16w8-2k-chunk1of2.pte", "SmolLM2-360M-Instruct-neuropilot-a16w8-2k-chunk2of2.pte"}, v.Files)
	assert.Equal(t, "SmolLM2-360M-Instruct-neuropilot-embedding-fp32.bin", v.Embedding)
	assert.Nil(t, v.FitsPhoneBudget, "no phone budget figure for an NPU file")
	assert.Equal(t, map[string]any{
		"cache_size": float64(2048), "num_layer": float64(32), "eos_tokens": []any{float64(2)},
		"tokenizer_path": "tokenizer.json", "token_embedding_path": v.Embedding, "model_package_paths": []any{v.Files[0], v.Files[1]},
	}, v.Runner, "the export's runner facts and where the runner finds the files")
	assert.Equal(t, float64(4096), cfg.Variants[1].Runner["cache_size"], "each window keeps its own runner block")
}

// TestRenamedFileOfAWindowIsDeleted re-exports the 4k window under another quantization
// name: the old 4k file goes, the 2k window stays.
func TestRenamedFileOfAWindowIsDeleted(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	a, b, d := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, w := range map[string]win{a: {backend: "xnnpack", window: 2048, seed: 1}, b: {backend: "xnnpack", window: 4096, seed: 2}} {
		_, err := publishDir(ctx, c, dir, writeWindow(t, dir, w))
		require.NoError(t, err)
	}
	_, err := publishDir(ctx, c, d, writeWindow(t, d, win{backend: "xnnpack", window: 4096, seed: 3, gptq: true}))
	require.NoError(t, err)
	st := readRepo(t, srv, testRepo)
	checkConsistent(t, st)
	assert.Equal(t, []string{".gitattributes", "LICENSE", "README.md", "tokenizer.json",
		"xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte", "xnnpack/SmolLM2-360M-Instruct-8da4w-gptq-4k.pte",
		"xnnpack/config.json", "xnnpack/export-report-2k.json", "xnnpack/export-report-4k.json"}, fileList(st))
}

func TestFiveWindowsPublishedConcurrently(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	wins := []win{
		{backend: "xnnpack", window: 2048, seed: 1}, {backend: "xnnpack", window: 4096, seed: 2},
		{backend: "xnnpack", window: 8192, seed: 3}, {backend: "vulkan", window: 2048, seed: 4},
		{backend: "mediatek", chip: "MT6991", window: 2048, seed: 5},
	}
	type job struct{ dir, rp string }
	var jobs []job
	for _, w := range wins {
		d := t.TempDir()
		jobs = append(jobs, job{d, writeWindow(t, d, w)})
	}
	// Publishers that read the head before another one commits get a 412 and rebuild.
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = publishDir(ctx, c, j.dir, j.rp)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "window %d", i)
	}
	st := readRepo(t, srv, testRepo)
	reports := checkConsistent(t, st)
	assert.Len(t, reports, len(wins))
	shas, _ := srv.History(testRepo)
	assert.Len(t, shas, len(wins)+1, "one commit per window on the initial commit")
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir, rp string) string // returns the repo to publish to
		want   string
	}{
		{"failed check", func(t *testing.T, dir, rp string) string {
			editReport(t, rp, func(r map[string]any) {
				r["structural_check"].([]any)[0].(map[string]any)["passed"] = false
				r["structural_check"].([]any)[0].(map[string]any)["problems"] = []any{"method forward is missing"}
			})
			return ""
		}, "did not pass its check (method forward is missing), so it is not published"},
		{"no smoke run", func(t *testing.T, dir, rp string) string {
			editReport(t, rp, func(r map[string]any) { delete(r, "smoke") })
			return ""
		}, "has no smoke run, and XNNPACK (CPU) files are published only after one passed: run `exe-expo smoke`"},
		{"failed smoke run", func(t *testing.T, dir, rp string) string {
			editReport(t, rp, func(r map[string]any) {
				r["smoke"].(map[string]any)["passed"] = false
				r["smoke"].(map[string]any)["problems"] = []any{"the file generated no token"}
			})
			return ""
		}, "must not be published: smoke test failed: the file generated no token"},
		{"failed gate", func(t *testing.T, dir, rp string) string {
			editReport(t, rp, func(r map[string]any) {
				r["gate"] = map[string]any{"kind": "gate", "passed": false, "problems": []any{"shortfall 0.4 is above 0.25"}}
			})
			return ""
		}, "must not be published: decision gate failed: shortfall 0.4 is above 0.25"},
		{"no check", func(t *testing.T, dir, rp string) string {
			editReport(t, rp, func(r map[string]any) { r["structural_check"] = []any{} })
			return ""
		}, "has 0 check result(s) for 1 .pte file(s)"},
		{"tokenizer in the folder", func(t *testing.T, dir, rp string) string {
			writeFile(t, filepath.Join(dir, "xnnpack", "tokenizer.json"), []byte("{}"))
			return ""
		}, "tokenizer files must stay at the repo root"},
		{"repo name with xnnpack", func(t *testing.T, dir, rp string) string {
			return "experimentalmachines/SmolLM2-360M-Instruct-xnnpack"
		}, "breaks the naming rules of the app (the openweights Android app, which loads these files): the repo name contains xnnpack"},
		{"repo name without a size", func(t *testing.T, dir, rp string) string {
			return "experimentalmachines/SmolLM2-Instruct-ExecuTorch"
		}, "the repo name carries no size"},
		{"file changed after export", func(t *testing.T, dir, rp string) string {
			writeFile(t, filepath.Join(dir, "xnnpack", "SmolLM2-360M-Instruct-8da4w-4k.pte"), []byte("short"))
			return ""
		}, "has 5 bytes and report"},
		{"report named for another window", func(t *testing.T, dir, rp string) string {
			editReport(t, rp, func(r map[string]any) { r["window"].(map[string]any)["context"] = 8192 })
			return ""
		}, "must be named export-report-8k.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rp := writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1})
			repo := tc.mutate(t, dir, rp)
			_, err := Load(dir, rp, repo)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func editReport(t *testing.T, rp string, edit func(map[string]any)) {
	t.Helper()
	var m map[string]any
	b := readFileT(t, rp)
	require.NoError(t, json.Unmarshal(b, &m))
	edit(m)
	out, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	writeFile(t, rp, out)
}

// TestRaceLostEveryTimeGivesUp answers every commit with the Hub's 412: publish re-reads
// and rebuilds DefaultAttempts times, pausing between (on a fake clock), then stops
// without having written anything.
func TestRaceLostEveryTimeGivesUp(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Load(dir, writeWindow(t, dir, win{backend: "xnnpack", window: 4096, seed: 1}), "")
	require.NoError(t, err)
	srv.MustAddModel(t, testRepo, map[string][]byte{"README.md": []byte("old card\n")})
	head := srv.Head(testRepo)
	f := srv.Inject(hubtest.Fault{Method: "POST", PathContains: "/commit/", Status: 412, Times: -1})
	var waits []time.Duration
	_, err = Publish(ctx, w, Options{Client: c, Wait: func(n int) time.Duration { waits = append(waits, hub.RetryWait(n)); return 0 }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gave up after 6 attempts")
	assert.Equal(t, DefaultAttempts, f.Hits())
	assert.Equal(t, []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second, 25 * time.Second}, waits)
	assert.Equal(t, head, srv.Head(testRepo))
}
