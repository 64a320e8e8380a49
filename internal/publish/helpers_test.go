package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

const (
	testModel = "HuggingFaceTB/SmolLM2-360M-Instruct"
	testRepo  = "experimentalmachines/SmolLM2-360M-Instruct-ExecuTorch"
	testSHA   = "a10cc1512eab1234567890abcdef1234567890ab"
)

// win describes one fake export: backend, chip ("" for any arm64), window, and a seed for
// the files' contents (a different seed is a re-export with other bytes).
type win struct {
	backend, chip string
	window        int
	seed          uint64
	gptq          bool // XNNPACK's GPTQ file name
}

func (w win) folder() string {
	switch w.backend {
	case "mediatek":
		return "mtk/" + strings.ToLower(w.chip)
	case "qnn":
		return "qnn/" + strings.ToLower(w.chip)
	}
	return w.backend
}

// names are the window's files, as the recipes name them.
func (w win) names() []string {
	stem, l := "SmolLM2-360M-Instruct", family.WindowLabel(w.window)
	switch w.backend {
	case "vulkan":
		return []string{stem + "-vulkan-8da4w-" + l + ".pte"}
	case "mediatek":
		return []string{stem + "-neuropilot-a16w8-" + l + "-chunk1of2.pte", stem + "-neuropilot-a16w8-" + l + "-chunk2of2.pte", stem + "-neuropilot-embedding-fp32.bin"}
	}
	if w.gptq {
		return []string{stem + "-8da4w-gptq-" + l + ".pte"}
	}
	return []string{stem + "-8da4w-" + l + ".pte"}
}

// writeWindow writes a fake export of w under dir (tokenizer and LICENSE at the root) and
// returns its report's path.
func writeWindow(t testing.TB, dir string, w win) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(w.seed, uint64(w.window)))
	kv := int64(81920)
	r := &report.Report{
		Backend: w.backend, Target: "any arm64", OutputRepo: testRepo, Tokenizer: "tokenizer.json",
		Source: report.Source{ID: testModel, SHA: testSHA, TotalParams: 361_821_120, Family: "llama", Variant: "instruct",
			License: report.License{License: "apache-2.0"}, LicenseFiles: []string{"LICENSE"}},
		Toolchain: map[string]string{"executorch": "1.4.0"},
		Recipe:    map[string]any{"label": "8da4w-g32", "description": "ExecuTorch 1.4.0 `export_llm`: test recipe."},
		Window:    report.Window{Context: w.window, Reason: "requested window", KVBytesPerToken: &kv, PhoneBudgetBytes: 5_000_000_000, FitsPhoneBudget: true},
		Metadata:  pte.Metadata{"get_max_seq_len": float64(w.window)},
		Run:       &report.Run{URL: "https://github.com/experimentalmachines/exe-expo/actions/runs/42", ID: "42"},
	}
	if w.backend == "xnnpack" { // the backend whose files the x86 runner runs
		r.Smoke = &smoke.Result{Kind: "smoke", Passed: true, Problems: []string{}, Reply: "The capital of France is Paris.", Answered: true}
	}
	if w.chip != "" {
		r.Target, r.TargetName, r.Window.KVBytesPerToken = w.chip, "Dimensity 9400", nil
		r.Toolchain["neuropilot_sdk"] = "8.0.8-build20250925"
		r.Recipe["runner"] = map[string]any{"cache_size": float64(w.window), "num_layer": float64(32), "eos_tokens": []any{float64(2)}}
	}
	for _, n := range w.names() {
		data := make([]byte, 2048+rng.IntN(4096))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		if strings.HasSuffix(n, ".bin") { // the embedding table is the source's, whatever the window
			data = []byte(strings.Repeat("embedding of "+testSHA, 64))
		}
		p := path.Join(w.folder(), n)
		writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), data)
		sum := sha256.Sum256(data)
		r.Files = append(r.Files, report.File{Path: p, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		if strings.HasSuffix(n, ".pte") {
			r.StructuralCheck = append(r.StructuralCheck, check.Result{Kind: "structural", Backend: w.backend, Passed: true})
		}
	}
	for _, f := range [][2]string{{"LICENSE", "Apache License 2.0 (test copy)\n"}, {"tokenizer.json", `{"model":"test tokenizer"}`}} {
		writeFile(t, filepath.Join(dir, f[0]), []byte(f[1]))
		sum := sha256.Sum256([]byte(f[1]))
		r.RootFiles = append(r.RootFiles, report.File{Path: f[0], Bytes: int64(len(f[1])), SHA256: hex.EncodeToString(sum[:])})
	}
	rp := filepath.Join(dir, filepath.FromSlash(w.folder()), report.Name(family.WindowLabel(w.window)))
	require.NoError(t, report.Write(rp, r))
	return rp
}

func writeFile(t testing.TB, p string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

// newHub starts a local Hub whose .pte files go to LFS, and a client for it that retries
// without waiting.
func newHub(t testing.TB) (*hubtest.Server, *hub.Client) {
	t.Helper()
	srv := hubtest.New(t)
	srv.RegularMax = 1024
	return srv, newClient(srv.URL, nil)
}

func newClient(url string, tr http.RoundTripper) *hub.Client {
	o := hub.Options{Endpoint: url, Token: "hf_test", RetryMax: 3, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, MaxRateLimitWait: 10 * time.Millisecond}
	if tr != nil {
		o.HTTPClient = &http.Client{Transport: tr}
	}
	return hub.New(o)
}

func noWait(int) time.Duration { return 0 }

// publishDir loads and publishes one report of an export folder.
func publishDir(ctx context.Context, c *hub.Client, dir, reportPath string) (*Result, error) {
	w, err := Load(dir, reportPath, "")
	if err != nil {
		return nil, err
	}
	return Publish(ctx, w, Options{Client: c, Wait: noWait})
}

// repoState is the repo's head as a test reads it straight from the server's store.
type repoState struct {
	head  string
	files map[string][]byte
}

func readRepo(t testing.TB, srv *hubtest.Server, repo string) repoState {
	t.Helper()
	head := srv.Head(repo)
	st := repoState{head: head, files: map[string][]byte{}}
	for _, p := range srv.Files(repo, head) {
		disk, _, _, err := srv.FileInfo(repo, head, p)
		require.NoError(t, err)
		b, err := os.ReadFile(disk)
		require.NoError(t, err)
		st.files[p] = b
	}
	return st
}

// checkConsistent holds the repo to publish's invariants: every folder's config.json is
// the one its reports build, the README is the card every report builds, every file a
// report lists is there with the report's sha256, nothing else sits in a backend folder,
// and the tokenizer is at the root only.
func checkConsistent(t testing.TB, st repoState) []placed {
	t.Helper()
	var all []placed
	folders := map[string][]placed{}
	listed := map[string]bool{}
	for p, b := range st.files {
		if !isReport(p) {
			continue
		}
		var r report.Report
		require.NoError(t, json.Unmarshal(b, &r), p)
		pl := placed{Path: p, Report: &r}
		all = append(all, pl)
		folders[pl.folder()] = append(folders[pl.folder()], pl)
		listed[p] = true
		for _, f := range r.Files {
			got, ok := st.files[f.Path]
			require.True(t, ok, "%s lists %s, which the repo lacks", p, f.Path)
			sum := sha256.Sum256(got)
			require.Equal(t, f.SHA256, hex.EncodeToString(sum[:]), f.Path)
			listed[f.Path] = true
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	skipped := map[string][]SkippedWindow{}
	for folder, rs := range folders {
		var said BackendConfig
		require.NoError(t, json.Unmarshal(st.files[folder+"/config.json"], &said), folder)
		for _, s := range said.Skipped {
			for _, r := range rs {
				require.NotEqual(t, r.Report.Window.Context, s.Context, "%s lists window %d as skipped and holds it", folder, s.Context)
			}
		}
		skipped[folder] = said.Skipped
		want, err := folderConfig(rs, said.Skipped)
		require.NoError(t, err)
		require.Equal(t, string(want), string(st.files[folder+"/config.json"]), "config.json of %s", folder)
		listed[folder+"/config.json"] = true
	}
	if len(all) > 0 {
		require.Equal(t, CardWith(all, skipped), string(st.files["README.md"]))
	}
	for p := range st.files {
		if strings.Contains(p, "/") {
			require.True(t, listed[p], "%s is in a backend folder and no report lists it", p)
		}
	}
	return all
}

func readFileT(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
