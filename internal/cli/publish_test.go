package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

const publishRepo = "experimentalmachines/SmolLM2-360M-Instruct-ExecuTorch"

// exportedWindow writes what an XNNPACK export of SmolLM2-360M-Instruct at 4k leaves in
// its --out folder.
func exportedWindow(t *testing.T, passed bool) string {
	t.Helper()
	dir := t.TempDir()
	program := []byte("PTE\x00 fake program for the publish command")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "xnnpack"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "xnnpack", "SmolLM2-360M-Instruct-8da4w-4k.pte"), program, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644))
	sum := sha256.Sum256(program)
	kv := int64(81920)
	r := &report.Report{
		Backend: "xnnpack", Target: "any arm64", OutputRepo: publishRepo, Tokenizer: "tokenizer.json",
		Source:          report.Source{ID: "HuggingFaceTB/SmolLM2-360M-Instruct", SHA: "a10cc1512eab0000", Family: "llama", Variant: "instruct", License: report.License{License: "apache-2.0"}},
		Toolchain:       map[string]string{"executorch": "1.4.0"},
		Recipe:          map[string]any{"label": "8da4w-g32", "description": "test recipe."},
		Metadata:        pte.Metadata{"get_max_context_len": 4096, "get_max_seq_len": 4096},
		Window:          report.Window{Context: 4096, Reason: "requested window 4096", KVBytesPerToken: &kv, PhoneBudgetBytes: 5e9},
		Files:           []report.File{{Path: "xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte", Bytes: int64(len(program)), SHA256: hex.EncodeToString(sum[:])}},
		StructuralCheck: []check.Result{{Kind: "structural", Backend: "xnnpack", Passed: passed, Problems: []string{}}},
		Smoke:           &smoke.Result{Kind: "smoke", Passed: true, Problems: []string{}, Reply: "Paris", Answered: true},
		RootFiles:       []report.File{{Path: "tokenizer.json", Bytes: 2, SHA256: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}},
	}
	require.NoError(t, report.Write(filepath.Join(dir, "xnnpack", "export-report-4k.json"), r))
	return dir
}

func TestPublishCommand(t *testing.T) {
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_OUTPUT", "")
	dir := exportedWindow(t, true)

	code, out, errs := run(t, "publish", dir, "--dry-run", "--skipped", `[{"window":32768,"reason":"over the job limit"},{"window":8192,"soc":"SM8750","reason":"not this folder"}]`)
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "+- `xnnpack/` 32k: over the job limit\n", "the card lists the folder's window not built")
	assert.NotContains(t, out, "not this folder")
	assert.Contains(t, out, `would commit "xnnpack 4k: HuggingFaceTB/SmolLM2-360M-Instruct@a10cc1512eab" to `+publishRepo+" on a new repo")
	assert.Contains(t, out, "add    xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte (0.00 GB, 41 bytes)")
	assert.Contains(t, out, "+# SmolLM2-360M-Instruct for ExecuTorch")
	assert.Empty(t, srv.Head(publishRepo), "a dry run creates nothing")

	summary, output := filepath.Join(t.TempDir(), "summary.md"), filepath.Join(t.TempDir(), "output")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("GITHUB_OUTPUT", output)
	code, out, errs = run(t, "publish", dir, "--backend", "xnnpack")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "xnnpack 4k: "+srv.URL+"/"+publishRepo+"/commit/")
	assert.Contains(t, srv.Files(publishRepo, "main"), "xnnpack/config.json")
	assert.Contains(t, out, "catalog experimentalmachines/exe-expo-catalog: "+publishRepo+" updated")
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "### XNNPACK (CPU): "+publishRepo)
	assert.Contains(t, string(md), "| Window | 4,096 tokens (requested window 4096) |")
	assert.Contains(t, string(md), "| Check | passed (\"Paris\") |")
	gh, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.Contains(t, string(gh), publishRepo)
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_OUTPUT", "")

	code, out, errs = run(t, "publish", dir)
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "already in "+publishRepo+", unchanged; no commit made")
	assert.Contains(t, out, "catalog experimentalmachines/exe-expo-catalog: "+publishRepo+" already current")

	code, out, _ = run(t, "publish", dir, "--dry-run")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, out, "the model card is unchanged")
}

func TestPublishCommandRefusals(t *testing.T) {
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"failed check", func(t *testing.T) []string { return []string{exportedWindow(t, false)} }, "did not pass its check"},
		{"bad repo", func(t *testing.T) []string {
			return []string{exportedWindow(t, true), "--repo", "experimentalmachines/SmolLM2-360M-Instruct-xnnpack"}
		}, "breaks the naming rules of the app (the openweights Android app, which loads these files): the repo name contains xnnpack"},
		{"no reports", func(t *testing.T) []string { return []string{t.TempDir()} }, "holds no export report"},
		{"other backend", func(t *testing.T) []string { return []string{exportedWindow(t, true), "--backend", "vulkan"} }, "holds no export report"},
		{"missing folder", func(t *testing.T) []string { return []string{filepath.Join(t.TempDir(), "nope")} }, "nope"},
		{"no folder", func(t *testing.T) []string { return nil }, "give exactly one REPORT_DIR"},
		{"release without a repository", func(t *testing.T) []string {
			t.Setenv("GITHUB_REPOSITORY", "")
			return []string{exportedWindow(t, true), "--release"}
		}, "publish: --release: a GitHub release needs GITHUB_REPOSITORY set to owner/name"},
		{"release in a dry run", func(t *testing.T) []string { return []string{exportedWindow(t, true), "--release", "--dry-run"} }, "takes no --release"},
		{"skipped windows that are not JSON", func(t *testing.T) []string { return []string{exportedWindow(t, true), "--skipped", "32768"} }, "--skipped is not a JSON list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := run(t, append([]string{"publish"}, tc.args(t)...)...)
			assert.Equal(t, ExitFailed, code)
			assert.Contains(t, errs, tc.want)
			assert.Empty(t, srv.Head(publishRepo), "nothing published")
		})
	}
}

// TestPublishCommandRelease publishes a window to the Hub and as a GitHub release, on a
// stand-in GitHub Enterprise API that records the calls.
func TestPublishCommandRelease(t *testing.T) {
	srv := hubtest.New(t)
	var mu sync.Mutex
	var calls []string
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && strings.Contains(r.URL.Path, "/releases/tags/"):
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"message":"Not Found"}`))
		case r.Method == "POST" && r.URL.Path == "/api/v3/repos/o/r/releases":
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{"id":7,"tag_name":"t"}`))
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/releases/7/assets"):
			_, _ = w.Write([]byte(`[]`))
		case r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/api/uploads/repos/o/r/releases/7/assets"):
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{"id":1}`))
		default:
			w.WriteHeader(500)
		}
	}))
	t.Cleanup(gh.Close)
	for k, v := range map[string]string{"HF_ENDPOINT": srv.URL, "HF_TOKEN": "hf_test", "GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "gh",
		"GITHUB_API_URL": gh.URL + "/api/v3", "GITHUB_STEP_SUMMARY": "", "GITHUB_OUTPUT": ""} {
		t.Setenv(k, v)
	}
	code, out, errs := run(t, "publish", exportedWindow(t, true), "--release")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "xnnpack 4k: GitHub release SmolLM2-360M-Instruct-xnnpack-4k-a10cc15 (3 assets)")
	assert.Contains(t, calls, "POST /api/uploads/repos/o/r/releases/7/assets?name=SmolLM2-360M-Instruct-8da4w-4k.pte")
	assert.Contains(t, calls, "POST /api/uploads/repos/o/r/releases/7/assets?name=tokenizer.json")
	assert.Contains(t, calls, "POST /api/uploads/repos/o/r/releases/7/assets?name=export-report-4k.json")
}

// TestCatalogCommand: after a publish the catalog lists the repo with the runtimes that load
// it, --check finds it current and shows a folder built for an older runtime as due,
// a lost catalog fails to print with the way back, and --rebuild makes it again.
func TestCatalogCommand(t *testing.T) {
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_OUTPUT", "")
	const catRepo = "experimentalmachines/exe-expo-catalog"

	code, _, errs := run(t, "catalog")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "catalog: read "+catRepo+"/catalog.json: ")
	assert.Contains(t, errs, "`exe-expo catalog --rebuild` makes it again from the model repos")

	code, _, errs = run(t, "publish", exportedWindow(t, true))
	require.Equal(t, ExitOK, code, errs)
	code, out, errs := run(t, "catalog")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "Catalog of experimentalmachines: 1 model repo(s)\n\n"+publishRepo+" (from HuggingFaceTB/SmolLM2-360M-Instruct)\n  xnnpack      ExecuTorch 1.4.0 (loads on 1.4.0 to 1.5.x); windows 4096\n")
	code, out, errs = run(t, "catalog", "--check")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "matches the org's 1 model repo(s)")
	// the window was built for 1.4.0: the check shows it due for a rebuild, and that is no
	// difference between the catalog and the repo
	assert.Contains(t, out, "- "+publishRepo+"/xnnpack was built for ExecuTorch 1.4.0; the pipeline builds for ExecuTorch "+pinned.Version()+" now: due for a rebuild (watch queues it)\n")

	// the catalog lost: a rebuild from the model repos gives the same catalog
	before, err := srv.FileBytes(catRepo, "main", "catalog.json")
	require.NoError(t, err)
	srv.MustAddModel(t, catRepo, map[string][]byte{"catalog.json": []byte(`{"schema_version": 1, "org": "experimentalmachines", "models": {}}`)})
	code, out, _ = run(t, "catalog", "--check")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out, "- "+publishRepo+" is published but not in the catalog")
	code, out, errs = run(t, "catalog", "--rebuild")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "rebuilt: 1 model repo(s)")
	after, err := srv.FileBytes(catRepo, "main", "catalog.json")
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}
