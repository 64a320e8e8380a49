// Package e2e runs the generated workflows for real with nektos/act in host mode: the Hub
// is hubtest on loopback and ExecuTorch is the export's stand-in toolchain, which writes
// genuine .pte files. The package holds tests only.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/workflow"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// actVersion is the act release .ci/run installs; the flags below are its.
const actVersion = "v0.2.89"

// actLimit bounds one act run. It is a hang guard, not a timing assertion: a run on an
// idle machine takes about two minutes.
const actLimit = 25 * time.Minute

// needAct returns act's path, or skips (fails under EXE_EXPO_CI=1, where .ci/run installs it).
func needAct(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"act", filepath.Join(os.Getenv("HOME"), "go", "bin", "act")} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "nektos/act is not installed: go install github.com/nektos/act@" + actVersion
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatal("EXE_EXPO_CI=1 and " + msg)
	}
	t.Skip(msg)
	return ""
}

// repoRoot is the checkout this test belongs to.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// gitRepo copies the working tree (tracked and untracked files git does not ignore) into a
// fresh repository whose origin is this project on GitHub: act reads github.repository from
// the origin, and the workflows' own checkout is then act's local copy.
func gitRepo(t *testing.T, root, origin string) string {
	t.Helper()
	dst := t.TempDir()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard").Output()
	require.NoError(t, err)
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() { // deleted in the tree, or a link
			continue
		}
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dst, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dst, name), data, info.Mode().Perm()))
	}
	initRepo(t, dst, origin)
	return dst
}

func initRepo(t *testing.T, dir, origin string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"remote", "add", "origin", "https://github.com/" + origin},
		{"add", "-A"},
		{"-c", "user.email=e2e@example.com", "-c", "user.name=e2e", "commit", "-q", "-m", "e2e"},
	} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

// hub starts hubtest with Qwen3-0.6B as the stand-in export reads it: the real config, a
// real safetensors file naming every tensor (tiny shapes), a tokenizer and a license.
func hub(t *testing.T) *hubtest.Server {
	t.Helper()
	dir := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	// the chat template smoke downloads with the tokenizer, in the stand-in transformers' form
	require.NoError(t, os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte("<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n"), 0o644))
	srv := hubtest.New(t)
	_, err := srv.AddModelDir("Qwen/Qwen3-0.6B", dir, hubtest.PipelineTag("text-generation"))
	require.NoError(t, err)
	return srv
}

// toolchain writes the python the workflows run (EXE_EXPO_PYTHON): the smoke driver goes to
// python3 over internal/drivers' stand-in runtime, everything else to the export's stand-in
// toolchain, which writes .pte files of about pteBytes (the export passes tools only the
// environment it names, so the size is set here).
func toolchain(t *testing.T, root string, pteBytes int64) string {
	t.Helper()
	bin := t.TempDir()
	require.NoError(t, exporttest.BuildStandin(bin))
	py, err := exec.LookPath("python3")
	require.NoError(t, err, "python3 runs the smoke driver")
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in
  *smoke_run.py|*speed_run.py) PYTHONPATH=%q exec %q "$@" ;;
esac
STANDIN_PTE_BYTES=%d exec %q "$@"
`, filepath.Join(root, "internal", "drivers", "testdata", "smoke_standin"), py, pteBytes, filepath.Join(bin, "python-ok"))
	path := filepath.Join(bin, "python")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// actRun is one act invocation's settings.
type actRun struct {
	dir      string // the repository act runs in
	workflow string // relative to dir
	inputs   map[string]string
	secrets  map[string]string
	vars     map[string]string
	env      map[string]string
	repos    map[string]string // remote action reference → local folder
}

// run runs act and returns its log; a failed run fails the test with the log's tail.
func (r actRun) run(t *testing.T, act string, labels []string) string {
	t.Helper()
	args := []string{"workflow_dispatch", "-W", r.workflow, "--no-cache-server", "--action-offline-mode"}
	for _, l := range labels {
		args = append(args, "-P", l+"=-self-hosted")
	}
	add := func(flag string, m map[string]string) {
		for k, v := range m {
			args = append(args, flag, k+"="+v)
		}
	}
	add("--input", r.inputs)
	add("-s", r.secrets)
	add("--var", r.vars)
	add("--env", r.env)
	add("--local-repository", r.repos)
	ctx, cancel := context.WithTimeout(context.Background(), actLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, act, args...)
	cmd.Dir = r.dir
	cmd.Env = append(hostEnv(), "XDG_CACHE_HOME="+t.TempDir())
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	logFile := filepath.Join(os.TempDir(), "exe-expo-e2e-"+strings.ReplaceAll(t.Name(), "/", "_")+".log") // kept after the test
	_ = os.WriteFile(logFile, log.Bytes(), 0o644)
	require.NoError(t, err, "act failed (log %s):\n%s", logFile, tail(log.String(), 80))
	return log.String()
}

// hostEnv is this process's environment without what would change what the jobs do: the
// test's own offline switch, the python .ci/run exports (each test names the jobs' python
// as the EXE_EXPO_PYTHON repository variable), a Hub or token of the developer's, an
// enclosing Actions run.
func hostEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "EXE_EXPO_OFFLINE" || name == "EXE_EXPO_PYTHON" || strings.HasPrefix(name, "HF_") || strings.HasPrefix(name, "GITHUB_") || strings.HasPrefix(name, "RUNNER_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// standins maps the pinned third-party actions the workflows use to the test's local
// stand-ins (act cannot download them here). actions/checkout of this repository needs
// none: act copies the local tree; the caller-repository checkout never runs here.
func standins(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, workflow.PinsFile))
	require.NoError(t, err)
	pins, err := workflow.ParsePins(workflow.PinsFile, data)
	require.NoError(t, err)
	local := map[string]string{
		"actions/upload-artifact":   "upload-artifact",
		"actions/download-artifact": "download-artifact",
		"actions/setup-go":          "setup",
		"actions/setup-python":      "setup",
		"actions/checkout":          "setup",
		"actions/cache":             "setup",
	}
	out := map[string]string{}
	for action, dir := range local {
		pin, ok := pins[action]
		require.True(t, ok, "%s is not in %s", action, workflow.PinsFile)
		abs, err := filepath.Abs(filepath.Join("testdata", "actions", dir))
		require.NoError(t, err)
		out[action+"@"+pin.Commit] = abs
	}
	return out
}

func labels(t *testing.T, root string) []string {
	t.Helper()
	cfg, err := config.LoadDir(filepath.Join(root, "config"))
	require.NoError(t, err)
	var out []string
	for _, r := range cfg.Runners {
		out = append(out, r.Label)
	}
	return out
}

// setOutput finds the last value a step of the job named job (not of a job whose name only
// starts so: "Verify" is not "Verify the fp32 fallback") set for name (act logs
// "::set-output:: name=value").
func setOutput(log, job, name string) (string, bool) {
	re := regexp.MustCompile(`(?m)^\[[^\]]*/` + regexp.QuoteMeta(job) + ` *\]\s+⚙\s+::set-output:: ` + regexp.QuoteMeta(name) + `=(.*)$`)
	m := re.FindAllStringSubmatch(log, -1)
	if m == nil {
		return "", false
	}
	return m[len(m)-1][1], true
}

type skip struct {
	Window int    `json:"window"`
	Reason string `json:"reason"`
}

// TestExportWorkflowUnderAct runs the generated export-xnnpack.yml as a user's Run workflow
// would: plan → export of two windows, one of which this host cannot build (skipped for
// memory) → verify (smoke) → publish to hubtest. The published repo must hold the built
// window's file, config.json and card; the skipped window must be reported and absent.
func TestExportWorkflowUnderAct(t *testing.T) {
	act := needAct(t)
	needSmallHost(t)
	needTool(t, "jq")
	root := repoRoot(t)
	srv := hub(t)
	repo := gitRepo(t, root, "experimentalmachines/exe-expo")
	artifacts := t.TempDir()
	log := actRun{
		dir:      repo,
		workflow: ".github/workflows/export-xnnpack.yml",
		inputs:   map[string]string{"model_id": "Qwen/Qwen3-0.6B", "contexts": "2048," + strconv.Itoa(skipWindow), "publish": "true", "gptq": "false"},
		secrets:  map[string]string{"HF_TOKEN": "hf_e2etoken"},
		vars:     map[string]string{"EXE_EXPO_PYTHON": toolchain(t, root, pteEstimate(t, "Qwen/Qwen3-0.6B", 2048))},
		env:      map[string]string{"HF_ENDPOINT": srv.URL, "EXE_EXPO_ACT_ARTIFACTS": artifacts, "SMOKE_STANDIN": "answer"},
		repos:    standins(t, root),
	}.run(t, act, labels(t, root))

	const out = "experimentalmachines/Qwen3-0.6B-ExecuTorch"
	files := srv.Files(out, "main")
	assert.Contains(t, files, "xnnpack/Qwen3-0.6B-8da4w-2k.pte")
	assert.Contains(t, files, "xnnpack/config.json")
	assert.Contains(t, files, "README.md")
	for _, f := range files {
		assert.NotContains(t, f, "32k", "the skipped window was published")
	}
	card, err := srv.FileBytes(out, "main", "README.md")
	require.NoError(t, err)
	assert.Contains(t, string(card), "Qwen3-0.6B")
	assert.Contains(t, string(card), "\nlicense: apache-2.0\n", "the source card's license in the front matter")
	assert.Contains(t, string(card), "distributed under the same terms (apache-2.0).")
	assert.Regexp(t, "(?m)^- `xnnpack/` 32k: .*(memory|RAM|swap)", string(card), "the card says why the skipped window is missing")
	assert.Contains(t, string(card), `| passed ("Paris") with the chat template |`, "verify's smoke ran the source's chat template")
	assert.Contains(t, string(card), "## Speed", "the export job timed the file")
	assert.Contains(t, string(card), "on the export host, not a phone: ")
	cfgJSON, err := srv.FileBytes(out, "main", "xnnpack/config.json")
	require.NoError(t, err)
	assert.Contains(t, string(cfgJSON), `"context": 32768`, "config.json lists the skipped window")

	raw, ok := setOutput(log, "Verify", "skipped")
	require.True(t, ok, "verify set no skipped output:\n%s", tail(log, 60))
	var skipped []skip
	require.NoError(t, json.Unmarshal([]byte(raw), &skipped), raw)
	require.Len(t, skipped, 1, raw)
	assert.Equal(t, skipWindow, skipped[0].Window)
	assert.Regexp(t, `(?i)memory|RAM|swap`, skipped[0].Reason)
	passed, ok := setOutput(log, "Verify", "files")
	require.True(t, ok)
	assert.Equal(t, `["xnnpack/Qwen3-0.6B-8da4w-2k.pte"]`, passed)
	assert.NotContains(t, log, "hf_e2etoken", "the token reached the log")
}

// pteEstimate is plan's .pte size for the window, which the stand-in then writes, so that
// the verify job's size check sees a file built as sized.
func pteEstimate(t *testing.T, model string, window int) int64 {
	t.Helper()
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	var out, errs bytes.Buffer
	code := cli.Main(context.Background(), []string{"plan", model, "--backend", "xnnpack", "--json"}, nil, &out, &errs)
	require.Equal(t, cli.ExitOK, code, errs.String())
	var p struct {
		Backends []struct {
			Windows []struct {
				Window int   `json:"window"`
				PTE    int64 `json:"pte_bytes_estimate"`
			} `json:"windows"`
		} `json:"backends"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &p))
	require.Len(t, p.Backends, 1)
	for _, w := range p.Backends[0].Windows {
		if w.Window == window {
			return w.PTE
		}
	}
	t.Fatalf("plan of %s has no %d window", model, window)
	return 0
}

// consumer is another repository's workflow that reuses the root action, once for a window
// this host builds and publishes, once for one it cannot build.
const consumer = `name: Consumer
on: workflow_dispatch
permissions: {}
jobs:
  export:
    runs-on: blacksmith-8vcpu-ubuntu-2404-arm
    strategy:
      matrix:
        window: ["2048", "32768"]
    steps:
      - name: Export with exe-expo
        id: exe
        uses: experimentalmachines/exe-expo@v1
        with:
          model-id: Qwen/Qwen3-0.6B
          backend: xnnpack
          window: ${{ matrix.window }}
          publish: "true"
          python: ${{ vars.EXE_EXPO_PYTHON }}
          free-disk: "false"
          hf-token: ${{ secrets.HF_TOKEN }}
      - name: Report
        env:
          WINDOW: ${{ matrix.window }}
          SKIPPED: ${{ steps.exe.outputs.skipped }}
          REASON: ${{ steps.exe.outputs.reason }}
          FILES: ${{ steps.exe.outputs.files }}
          REPO: ${{ steps.exe.outputs.repo }}
        run: echo "RESULT window=$WINDOW skipped=$SKIPPED files=$FILES repo=$REPO reason=$REASON"
`

// TestRootActionFromAnotherRepository runs the root action as another repository would
// (uses: experimentalmachines/exe-expo@v1, mapped by act to this tree): the window this host
// can build is exported, checked and published to hubtest; the one it cannot is a skip
// with its reason, not a failure.
func TestRootActionFromAnotherRepository(t *testing.T) {
	act := needAct(t)
	needSmallHost(t)
	root := repoRoot(t)
	srv := hub(t)
	action := gitRepo(t, root, "experimentalmachines/exe-expo")
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".github", "workflows"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".github", "workflows", "consumer.yml"), []byte(consumer), 0o644))
	initRepo(t, repo, "someone/consumer")
	repos := standins(t, root)
	repos["experimentalmachines/exe-expo@v1"] = action
	log := actRun{
		dir:      repo,
		workflow: ".github/workflows/consumer.yml",
		secrets:  map[string]string{"HF_TOKEN": "hf_e2etoken"},
		vars:     map[string]string{"EXE_EXPO_PYTHON": toolchain(t, root, pteEstimate(t, "Qwen/Qwen3-0.6B", 2048))},
		env:      map[string]string{"HF_ENDPOINT": srv.URL, "SMOKE_STANDIN": "answer"},
		repos:    repos,
	}.run(t, act, labels(t, root))

	const out = "experimentalmachines/Qwen3-0.6B-ExecuTorch"
	assert.Contains(t, log, `RESULT window=2048 skipped=false files=["xnnpack/Qwen3-0.6B-8da4w-2k.pte"] repo=`+out+" reason=")
	assert.Regexp(t, `RESULT window=32768 skipped=true files=\[\] repo= reason=.*needs about [0-9.]+ GiB of memory`, log)
	files := srv.Files(out, "main")
	assert.Contains(t, files, "xnnpack/Qwen3-0.6B-8da4w-2k.pte")
	assert.Contains(t, files, "xnnpack/config.json")
	card, err := srv.FileBytes(out, "main", "README.md")
	require.NoError(t, err)
	assert.Contains(t, string(card), `| passed ("Paris") with the chat template |`, "the root action's smoke ran the source's chat template")
	assert.Contains(t, string(card), "## Speed", "the root action's smoke timed the file")
	assert.NotContains(t, log, "hf_e2etoken", "the token reached the log")
}

// skipWindow is the window these tests expect this host to skip for memory; skipNeedGiB
// is about what its export needs (plan's host need for Qwen3-0.6B at 32k).
const (
	skipWindow  = 32768
	skipNeedGiB = 90
)

// needSmallHost skips on a host with enough memory to build the skip window, where the
// export would run instead of being skipped (any machine CI runs on has far less).
func needSmallHost(t *testing.T) {
	t.Helper()
	h, err := run.Host(t.TempDir())
	require.NoError(t, err)
	if h.MemTotalBytes+h.SwapTotalBytes > skipNeedGiB<<30 {
		t.Skipf("this host has %d GiB of memory and swap: it would build the %d-token window these tests expect it to skip", (h.MemTotalBytes+h.SwapTotalBytes)>>30, skipWindow)
	}
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatalf("EXE_EXPO_CI=1 and %s is not installed", name)
		}
		t.Skipf("%s is not installed", name)
	}
}
