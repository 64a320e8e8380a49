package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/tinymodel"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// realPython is the real toolchain's python (EXE_EXPO_PYTHON, which .ci/run sets from
// python/install.sh), or the test skips (fails under EXE_EXPO_CI=1).
func realPython(t *testing.T) string {
	t.Helper()
	p := os.Getenv("EXE_EXPO_PYTHON")
	msg := "EXE_EXPO_PYTHON names no python with ExecuTorch " + pinned.Version() + " (python/install.sh installs one)"
	if p != "" {
		out, err := exec.Command(p, "-c", "from importlib.metadata import version; print(version('executorch'))").Output()
		if err == nil && strings.TrimSpace(string(out)) == pinned.Version() {
			return p
		}
	}
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatal("EXE_EXPO_CI=1 and " + msg)
	}
	t.Skip(msg)
	return ""
}

// TestExportWorkflowRealToolchain runs the generated export-xnnpack.yml once with the real
// ExecuTorch toolchain (config/versions.env's release) instead of the stand-in: a tiny real Qwen3 model (built with
// transformers' own classes, taught one reply) is seeded into hubtest as Qwen/Qwen3-0.6B,
// and plan, the GPTQ solve, the export, verify (smoke and gate), the fp32 fallback and
// publish all run for real. The pipeline grades the fidelity text (gate.max_mean_kl 5e-4:
// the 4-bit file's mean KL is about 2e-3, the fp32 file's about 1e-4, from its int8
// embedding table), so the quantized
// window fails the gate and its fp32 file is exported, gated and published in its place,
// with the reason on the card and in config.json. The official JS client then reads the repo
// back, and every file's sha256 matches the checked export reports.
func TestExportWorkflowRealToolchain(t *testing.T) {
	act := needAct(t)
	py := realPython(t)
	needTool(t, "jq")
	node := needNode(t)
	root := repoRoot(t)
	srv, id := seedTinyQwen(t, py)

	repo := gitRepo(t, root, "experimentalmachines/exe-expo")
	editAndCommit(t, repo, filepath.Join("config", "pipeline.yaml"), "  max_mean_kl: 0\n", "  max_mean_kl: 0.0005\n")
	artifacts := t.TempDir()
	log := actRun{
		dir:      repo,
		workflow: ".github/workflows/export-xnnpack.yml",
		inputs:   map[string]string{"model_id": id, "contexts": "2048", "publish": "true", "gptq": "true"},
		secrets:  map[string]string{"HF_TOKEN": "hf_e2etoken"},
		vars:     map[string]string{"EXE_EXPO_PYTHON": py},
		env:      map[string]string{"HF_ENDPOINT": srv.URL, "EXE_EXPO_ACT_ARTIFACTS": artifacts, "OMP_NUM_THREADS": "1"},
		repos:    standins(t, root),
	}.run(t, act, labels(t, root))
	assert.NotContains(t, log, "hf_e2etoken", "the token reached the log")

	const out = "experimentalmachines/Qwen3-0.6B-ExecuTorch"
	publishedFallback(t, srv, out, log)

	// The reports the verify job checked: every file they list must come back from the Hub,
	// through the official client, with the report's sha256 and size.
	want := checkedFiles(t, artifacts)
	fetched := jsFetch(t, node, filepath.Join(root, "pkg", "hub", "hubtest", "testdata", "js"), srv.URL, out)
	for path, f := range want {
		got, ok := fetched[path]
		if assert.True(t, ok, "%s is in a report but not on the Hub", path) {
			assert.Equal(t, f.SHA256, got.SHA256, path)
			assert.Equal(t, f.Bytes, got.Size, path)
		}
	}
}

// seedTinyQwen builds the tiny Qwen3 (transformers' own classes, taught one reply) with py
// and serves it from a fresh hubtest under Qwen/Qwen3-0.6B's id, which it returns.
func seedTinyQwen(t *testing.T, py string) (*hubtest.Server, string) {
	cfg, err := config.Default()
	require.NoError(t, err)
	f, err := tinymodel.Lookup("qwen3")
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "Qwen3-0.6B")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	_, err = tinymodel.Build(ctx, py, cfg, f, dir, tinymodel.Options{Seed: 1, Reply: "Paris is the answer."})
	require.NoError(t, err)
	srv := hubtest.New(t)
	_, err = srv.AddModelDir(f.ID, dir, hubtest.PipelineTag("text-generation"))
	require.NoError(t, err)
	return srv, f.ID
}

// publishedFallback checks what the workflow published to out: the fp32 file in place of
// the window the gate refused, verify's outputs in the log, and the card and config.json
// saying why, with the real gate's figures, the delegate coverage and the phone table.
func publishedFallback(t *testing.T, srv *hubtest.Server, out, log string) {
	files := srv.Files(out, "main")
	require.Contains(t, files, "xnnpack/Qwen3-0.6B-fp32-2k.pte", "the fp32 fallback was not published: %v", files)
	assert.NotContains(t, files, "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte", "the file the gate refused was published")
	failed, ok := setOutput(log, "Verify", "failed")
	require.True(t, ok, "verify set no failed output:\n%s", tail(log, 60))
	assert.Equal(t, "[2048]", failed, "the window the gate refused")
	passed, ok := setOutput(log, "Verify the fp32 fallback", "files")
	require.True(t, ok, "the fallback's verify set no files output:\n%s", tail(log, 60))
	assert.Equal(t, `["xnnpack/Qwen3-0.6B-fp32-2k.pte"]`, passed)
	assert.Contains(t, files, "xnnpack/config.json")
	assert.Contains(t, files, "README.md")
	card, err := srv.FileBytes(out, "main", "README.md")
	require.NoError(t, err)
	assert.Contains(t, string(card), "distributed under the same terms (apache-2.0).", "the tiny model card's license")
	assert.Contains(t, string(card), "Windows published in fp32 instead of their quantized file:\n\n- XNNPACK (CPU) at 2,048 tokens is fp32 (`xnnpack/Qwen3-0.6B-fp32-2k.pte`): "+
		"its 8da4w-gptq file `Qwen3-0.6B-8da4w-gptq-2k.pte` failed the checks before publishing (decision gate failed: mean KL against fp32 on the fidelity text is ", "the card says why the window is fp32")
	// the card from the real reports: the quality column (the real gate's figures against
	// the solve job's fp32 reference), the delegate coverage read from the real .pte, and
	// the phone table
	assert.Regexp(t, `\| next token [0-9.]+%, KL [0-9.]+; deep [0-9.]+%, KL [0-9.]+; gate [0-9.]+ \(fp32 [0-9.]+\) \| 15 of 15 linears, [0-9]+% of weights \|`, string(card))
	// the tiny model's 2k window is far below every phone class: each holds it
	assert.Contains(t, string(card), "| XNNPACK (CPU) (any arm64) | 2k | 2k | 2k | 2k | 2k |\n", "the phone table")
	cfgJSON, err := srv.FileBytes(out, "main", "xnnpack/config.json")
	require.NoError(t, err)
	assert.Contains(t, string(cfgJSON), `"fits_phones_gib": [`, "config.json lists the phones each window fits")
	assert.Contains(t, string(cfgJSON), `"replaces": "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte"`, "config.json names the file the fp32 one replaces")

}

// checkedFiles are the files the checked export reports among the artifacts list (the
// fp32 fallback's: only it passed), by path; each report is held to the run it records.
func checkedFiles(t *testing.T, artifacts string) map[string]report.File {
	var reports []string
	require.NoError(t, filepath.WalkDir(artifacts, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "export-report-") {
			reports = append(reports, p)
		}
		return err
	}))
	require.NotEmpty(t, reports, "no export report among the artifacts")
	want := map[string]report.File{}
	for _, p := range reports {
		r, err := report.Read(p)
		require.NoError(t, err)
		if r.Fallback == nil {
			assert.Equal(t, "gptq", r.Recipe["int4_codes"], "%s: the export used the solve's codes", p)
		} else {
			assert.Equal(t, "fp32", r.Recipe["qmode"], "%s: a fallback builds fp32", p)
			assert.Equal(t, "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte", r.Fallback.Replaces, p)
		}
		if r.Smoke == nil && r.Gate == nil {
			continue // an export leg's report, before the checks
		}
		require.NotNil(t, r.Smoke, "%s: verified without a smoke run", p)
		require.NotNil(t, r.Gate, "%s: verified without the gate", p)
		assert.NotNil(t, r.Fallback, "%s: only the fp32 file passed the checks", p)
		assert.True(t, r.Smoke.Passed, "smoke: %v", r.Smoke.Problems)
		assert.True(t, r.Gate.Passed, "gate: %v", r.Gate.Problems)
		assert.Positive(t, r.Gate.Graded)
		for _, f := range r.Files {
			want[f.Path] = f
		}
	}
	require.NotEmpty(t, want, "no checked report among the artifacts")
	return want
}

// editAndCommit replaces old with new in the repo's file and commits it, so the workflow
// runs with the edited pipeline.
func editAndCommit(t *testing.T, repo, name, old, new string) {
	t.Helper()
	path := filepath.Join(repo, name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s has no %q to edit", name, old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
	out, err := exec.Command("git", "-C", repo, "-c", "user.email=e2e@example.com", "-c", "user.name=e2e", "commit", "-qam", "edit "+name).CombinedOutput()
	require.NoError(t, err, "git commit: %s", out)
}

type fetchedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// jsFetch lists the repo and downloads every file with @huggingface/hub, as the app does.
func jsFetch(t *testing.T, node, jsDir, hubURL, repo string) map[string]fetchedFile {
	t.Helper()
	arg, err := json.Marshal(map[string]any{"mode": "fetch", "hubUrl": hubURL, "token": "hf_e2etoken", "repo": repo})
	require.NoError(t, err)
	cmd := exec.Command(node, "driver.mjs", string(arg))
	cmd.Dir = jsDir
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var res []fetchedFile
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	m := map[string]fetchedFile{}
	for _, f := range res {
		m[f.Path] = f
	}
	return m
}

// needNode is node with the JS client installed (.ci/run runs npm ci), or the test skips.
func needNode(t *testing.T) string {
	t.Helper()
	node, _ := hubtest.JSClient(t)
	return node
}
