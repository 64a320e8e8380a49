package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/workflow"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/stretchr/testify/require"
)

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
