package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/golden"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// The CLI goldens hold what plan, export, inspect and publish print (and the --result and
// export report files they write) for fixed inputs, so a refactor of the packages under the
// CLI shows any change in what a user or a workflow reads. They were made from the code as
// it was before such a refactor: regenerate them (go test ./internal/cli -run CLIGolden -update)
// only for a change of output that is meant.

// cliCase is one command line whose outputs are compared with files under
// testdata/golden/<name>.*.
type cliCase struct {
	name string
	// args builds the command line in c, which gives a fresh folder and records the
	// folders and addresses to replace.
	args func(c *cliRun) []string
	code int
	// stderr says what is held of stderr.
	stderr stderrRule
	// jsonStdout blanks the volatile values of a JSON stdout (export's "seconds").
	jsonStdout bool
	// files are files the command writes, relative to the case's root, compared after
	// normalizing, each under testdata/golden/<name>.<base name>.
	files []string
}

// stderrRule is what a case holds stderr to.
type stderrRule int

const (
	stderrEmpty   stderrRule = iota // nothing printed
	stderrGolden                    // compared with testdata/golden/<name>.stderr
	stderrIgnored                   // export streams its tools' logs there, with timings
)

// cliRun is one case's run: its root folder and what to write in the place of the
// temporary folders and local server addresses its outputs name.
type cliRun struct {
	t       *testing.T
	root    string
	replace map[string]string
}

// tempName matches the numbered folders t.TempDir makes under the case's own folder.
var tempName = regexp.MustCompile(`\$TMP/[0-9]+`)

// normalize writes the case's placeholders into s, longest value first so a folder inside
// another is named as itself.
func (c *cliRun) normalize(s string) string {
	keys := make([]string, 0, len(c.replace))
	for k := range c.replace {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, c.replace[k])
	}
	return tempName.ReplaceAllString(s, "$$TMP/N")
}

// volatileKey matches a JSON line (as json.MarshalIndent writes it) whose value depends on
// the machine or the moment: host facts, memory samples, timings and start times.
var volatileKey = regexp.MustCompile(`^(\s*)"(nproc|mem_total_bytes|swap_total_bytes|cpu_model|disk_free_bytes|disk_path|` +
	`samples|sample_every_seconds|peak_mem_used_bytes|peak_swap_used_bytes|peak_in_use_bytes|peak_in_use_at|` +
	`min_mem_available_bytes|peak_cgroup_bytes|cgroup_source|peak_rss_tree_bytes|peak_rss_convert_bytes|` +
	`peak_rss_export_bytes|convert_seconds|export_seconds|total_seconds|seconds|share|started_at|max_rss_bytes|` +
	`runner_label)": ([^,]*?)(,?)$`)

// normalizeJSON blanks the volatile values of an indented JSON file, keeping its key
// order and layout, so the rest is compared byte for byte.
func normalizeJSON(b string) string {
	lines := strings.Split(b, "\n")
	for i, l := range lines {
		lines[i] = volatileKey.ReplaceAllString(l, `$1"$2": "<volatile>"$4`)
	}
	return strings.Join(lines, "\n")
}

// pteTestdata holds the real .pte fixtures; the goldens name it $PTE, so where the fixtures
// sit relative to this package is not part of what a command prints.
var pteTestdata = filepath.Join("..", "..", "pkg", "pte", "testdata")

func cliGoldenCases() []cliCase {
	plain := func(args ...string) func(*cliRun) []string {
		return func(*cliRun) []string { return args }
	}
	pteFile := func(parts ...string) string {
		return filepath.Join(append([]string{pteTestdata}, parts...)...)
	}
	withResult := func(args ...string) func(*cliRun) []string {
		return func(c *cliRun) []string { return append(args, "--result", filepath.Join(c.root, "result.json")) }
	}
	return []cliCase{
		// plan: a Qwen3, a Llama and a SmolLM2 (eligible), Gemma 3 (one backend), an MoE
		// Qwen3 and Phi-4 (refused), in text and JSON.
		{name: "plan-qwen3-1.7b", args: plain("plan", "Qwen/Qwen3-1.7B")},
		{name: "plan-qwen3-1.7b-json", args: plain("plan", "--json", "Qwen/Qwen3-1.7B")},
		{name: "plan-llama-3.2-1b", args: plain("plan", "meta-llama/Llama-3.2-1B-Instruct")},
		{name: "plan-llama-3.2-1b-json", args: plain("plan", "--json", "meta-llama/Llama-3.2-1B-Instruct")},
		{name: "plan-smollm2-360m", args: plain("plan", "HuggingFaceTB/SmolLM2-360M-Instruct")},
		{name: "plan-smollm2-360m-json", args: plain("plan", "--json", "HuggingFaceTB/SmolLM2-360M-Instruct")},
		{name: "plan-gemma-3-1b", args: plain("plan", "google/gemma-3-1b-it")},
		{name: "plan-qwen3-30b-a3b", args: plain("plan", "Qwen/Qwen3-30B-A3B"), code: ExitNotEligible, stderr: stderrGolden},
		{name: "plan-qwen3-30b-a3b-json", args: plain("plan", "--json", "Qwen/Qwen3-30B-A3B"), code: ExitNotEligible, stderr: stderrGolden},
		{name: "plan-phi-4-mini", args: plain("plan", "microsoft/Phi-4-mini-instruct"), stderr: stderrGolden},
		{name: "plan-phi-4-mini-json", args: plain("plan", "--json", "microsoft/Phi-4-mini-instruct"), stderr: stderrGolden},
		// plan with the windows a workflow asks for, and the --result a workflow reads
		{name: "plan-xnnpack-contexts", args: withResult("plan", "Qwen/Qwen3-1.7B", "--backend", "xnnpack", "--contexts", "2048,4096"),
			files: []string{"result.json"}},
		{name: "plan-xnnpack-contexts-json", args: withResult("plan", "--json", "Qwen/Qwen3-1.7B", "--backend", "xnnpack", "--contexts", "2048,4096"),
			files: []string{"result.json"}},
		{name: "plan-qnn-result", args: withResult("plan", "Qwen/Qwen3-1.7B", "--backend", "qnn"), files: []string{"result.json"}},
		{name: "plan-refused-result", args: withResult("plan", "Qwen/Qwen3-30B-A3B", "--backend", "xnnpack"),
			code: ExitNotEligible, stderr: stderrGolden, files: []string{"result.json"}},
		{name: "plan-local-folder", args: func(c *cliRun) []string {
			return []string{"plan", exporttest.ModelDir(c.t, "Qwen/Qwen3-0.6B"), "--id", "Qwen/Qwen3-0.6B", "--backend", "vulkan"}
		}},
		// inspect: ExecuTorch's add program, Qualcomm's stories260k and a linear layer
		// that fails the XNNPACK check
		{name: "inspect-add", args: plain("inspect", pteFile("add.pte"))},
		{name: "inspect-add-json", args: plain("inspect", "--json", pteFile("add.pte"))},
		{name: "inspect-qnn-llama", args: withResult("inspect", pteFile("stories260k_hybrid_llama_qnn.pte"), "--backend", "qnn"),
			files: []string{"result.json"}},
		{name: "inspect-linear-xnnpack-json", args: withResult("inspect", "--json", "--backend", "xnnpack", pteFile("coverage", "linear-xnnpack-8da4w.pte")),
			code: ExitFailed, stderr: stderrGolden, files: []string{"result.json"}},
		// export: one window with the stand-in toolchain; its report with the machine's
		// facts and the timings blanked
		{name: "export-qwen3-0.6b-xnnpack-2k", args: func(c *cliRun) []string {
			bin := standinBin(c.t)
			return []string{"export", "--backend", "xnnpack", exporttest.ModelDir(c.t, "Qwen/Qwen3-0.6B"), "--context", "2048",
				"--out", filepath.Join(c.root, "out"), "--work", filepath.Join(c.root, "work"), "--python", filepath.Join(bin, "python-ok"),
				"--result", filepath.Join(c.root, "result.json")}
		}, stderr: stderrIgnored, jsonStdout: true, files: []string{"result.json", "out/xnnpack/export-report-2k.json"}},
		// publish: a dry run of one report folder against the local Hub
		{name: "publish-dry-run", args: func(c *cliRun) []string {
			srv := hubtest.New(c.t)
			c.t.Setenv("HF_ENDPOINT", srv.URL)
			c.t.Setenv("HF_TOKEN", "hf_test")
			c.replace[srv.URL] = "$HUB"
			return []string{"publish", exportedWindow(c.t, true), "--dry-run", "--result", filepath.Join(c.root, "result.json")}
		}, files: []string{"result.json"}},
	}
}

// TestCLIGolden runs each case in-process, offline on the embedded snapshot, and compares
// stdout, stderr and the files it wrote with testdata/golden.
func TestCLIGolden(t *testing.T) {
	// what a runner or a developer's shell sets and the commands read: none of it may reach
	// the goldens
	for k, v := range map[string]string{"EXE_EXPO_OFFLINE": "1", "HF_ENDPOINT": "", "HF_TOKEN": "", "EXE_EXPO_RUNNER": "",
		"GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": "", "GITHUB_OUTPUT": "", "GITHUB_REPOSITORY": "", "GITHUB_RUN_ID": "",
		"GITHUB_API_URL": "", "GH_TOKEN": "", "GITHUB_TOKEN": "", "EXE_EXPO_PYTHON": "", "MTK_PYTHON": "", "EXECUTORCH_SRC": ""} {
		t.Setenv(k, v)
	}
	for _, tc := range cliGoldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			c := &cliRun{t: t, root: root, replace: map[string]string{root: "$ROOT", filepath.Dir(root): "$TMP", pteTestdata: "$PTE"}}
			code, out, errs := run(t, tc.args(c)...)
			assert.Equal(t, tc.code, code, "stderr: %s", errs)
			dir := filepath.Join("testdata", "golden")
			out = c.normalize(out)
			if tc.jsonStdout {
				out = normalizeJSON(out)
			}
			golden.Check(t, filepath.Join(dir, tc.name+".stdout"), []byte(out))
			switch tc.stderr {
			case stderrEmpty:
				assert.Empty(t, errs)
			case stderrGolden:
				golden.Check(t, filepath.Join(dir, tc.name+".stderr"), []byte(c.normalize(errs)))
			}
			for _, f := range tc.files {
				b, err := os.ReadFile(filepath.Join(root, f))
				require.NoError(t, err)
				golden.Check(t, filepath.Join(dir, tc.name+"."+filepath.Base(f)), []byte(normalizeJSON(c.normalize(string(b)))))
			}
		})
	}
}
