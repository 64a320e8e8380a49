package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/cli"
)

// These tests run the committed run: scripts with bash as Actions does (-eo pipefail),
// with a stand-in exe-expo on PATH that answers what a test gives it and records its
// arguments, so the wiring between the plan, the export legs and the checks is tested for
// real: jq filters, exit codes, outputs.

// stub is a stand-in exe-expo: it prints stdout and stderr and exits with rc, or, for
// inspect, fails the files whose name starts with "bad".
const stub = `#!/bin/sh
printf '%s\n' "$*" >> "$STUB_ARGS"
if [ "$1" = gate ] && [ -n "$STUB_GATE_RC" ]; then exit "$STUB_GATE_RC"; fi
if [ "$1" = inspect ]; then
  case "$(basename "$2")" in bad*) exit 2 ;; esac
  exit 0
fi
cat "$STUB_STDOUT"
cat "$STUB_STDERR" >&2
exit "$STUB_RC"
`

// script is one step's run: block from a committed workflow.
func script(t *testing.T, file, job, name string) string {
	t.Helper()
	return scriptAt(t, filepath.Join(root, OutputDir, file), job, name)
}

// scriptAt is one step's run: block from the workflow file at path.
func scriptAt(t *testing.T, file, job, name string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	run, _ := step(t, decode(t, data).jobs()[job], name)["run"].(string)
	require.NotEmpty(t, run, "%s jobs.%s step %q has no run:", file, job, name)
	return run
}

// stepRun is the result of running a script.
type stepRun struct {
	code    int
	log     string
	outputs map[string]string
	args    []string
	dir     string
}

// answer is what the stand-in exe-expo prints and how it exits.
type answer struct {
	stdout, stderr string
	rc             int
}

// runStep runs script in a fresh folder, laid out by prepare when given, with env and the
// stand-in giving ans.
func runStep(t *testing.T, script string, env map[string]string, ans answer, prepare func(dir string)) stepRun {
	t.Helper()
	bash := needTool(t, "bash")
	needTool(t, "jq")
	dir, bin := t.TempDir(), t.TempDir()
	if prepare != nil {
		prepare(dir)
	}
	require.NoError(t, os.WriteFile(filepath.Join(bin, "exe-expo"), []byte(stub), 0o755))
	files := map[string]string{"STUB_STDOUT": ans.stdout, "STUB_STDERR": ans.stderr, "GITHUB_OUTPUT": "", "STUB_ARGS": ""}
	vars := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "RUNNER_TEMP=" + t.TempDir(), "STUB_RC=" + strconv.Itoa(ans.rc)}
	for name, content := range files {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		vars = append(vars, name+"="+p)
		files[name] = p
	}
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	scriptFile := filepath.Join(t.TempDir(), "step.sh")
	require.NoError(t, os.WriteFile(scriptFile, []byte(script), 0o644))
	cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", scriptFile)
	cmd.Dir, cmd.Env = dir, vars
	out, err := cmd.CombinedOutput()
	r := stepRun{log: string(out), outputs: map[string]string{}, dir: dir}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	gh, err := os.ReadFile(files["GITHUB_OUTPUT"])
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(gh)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			r.outputs[k] = v
		}
	}
	args, err := os.ReadFile(files["STUB_ARGS"])
	require.NoError(t, err)
	if a := strings.TrimSpace(string(args)); a != "" {
		r.args = strings.Split(a, "\n")
	}
	return r
}

// realPlan is what `exe-expo plan MODEL --backend B --json` prints offline, and its code.
func realPlan(t *testing.T, model, backendName string) (string, int) {
	t.Helper()
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	var out, errs strings.Builder
	code := cli.Main(context.Background(), []string{"plan", model, "--backend", backendName, "--json"}, strings.NewReader(""), &out, &errs)
	require.Contains(t, []int{cli.ExitOK, cli.ExitNotEligible}, code, errs.String())
	return out.String(), code
}

type planWindow struct {
	Window  int    `json:"window"`
	Runner  string `json:"runner"`
	SwapGiB int    `json:"swap_gib"`
	Skip    string `json:"skip"`
}

// planned splits a plan's windows into those placed on a runner and those skipped.
func planned(t *testing.T, planJSON string) (placed, skipped []planWindow) {
	t.Helper()
	var p struct {
		Backends []struct {
			Windows []planWindow `json:"windows"`
		} `json:"backends"`
	}
	require.NoError(t, json.Unmarshal([]byte(planJSON), &p))
	require.Len(t, p.Backends, 1)
	for _, w := range p.Backends[0].Windows {
		if w.Skip != "" {
			skipped = append(skipped, w)
		} else {
			placed = append(placed, w)
		}
	}
	return placed, skipped
}

type legWindow struct {
	Window  int    `json:"window"`
	Runner  string `json:"runner,omitempty"`
	SwapGiB int    `json:"swap_gib,omitempty"`
	SoC     string `json:"soc,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func legs(t *testing.T, s string) []legWindow {
	t.Helper()
	var out []legWindow
	require.NoError(t, json.Unmarshal([]byte(s), &out), s)
	return out
}

func TestPlanStepBuildsTheMatrix(t *testing.T) {
	planScript := script(t, "export-mediatek.yml", "plan", "Plan the windows")
	stdout, code := realPlan(t, "Qwen/Qwen3-4B", "mediatek")
	placed, skipped := planned(t, stdout)
	require.NotEmpty(t, placed, "the case needs windows a runner can build")
	require.NotEmpty(t, skipped, "the case needs windows no runner can build")
	env := map[string]string{"MODEL_ID": "Qwen/Qwen3-4B", "REVISION": "main", "BACKEND": "mediatek",
		"CONTEXTS": "512, 2048, 4096, 8192, 16384, 32768", "SOCS": "MT6991, MT6989"}

	r := runStep(t, planScript, env, answer{stdout: stdout, rc: code}, nil)
	require.Equal(t, 0, r.code, r.log)
	assert.Equal(t, []string{"plan Qwen/Qwen3-4B --revision main --backend mediatek --json"}, r.args)
	var wantLegs, wantSkips []legWindow
	for _, w := range placed {
		require.NotEmpty(t, w.Runner)
		wantLegs = append(wantLegs, legWindow{Window: w.Window, Runner: w.Runner, SwapGiB: w.SwapGiB})
	}
	for _, w := range skipped {
		wantSkips = append(wantSkips, legWindow{Window: w.Window, Reason: w.Skip})
	}
	assert.Equal(t, wantLegs, legs(t, r.outputs["windows"]))
	assert.Equal(t, wantSkips, legs(t, r.outputs["skipped"]))
	assert.Equal(t, `["MT6991","MT6989"]`, r.outputs["socs"])

	env["CONTEXTS"] = fmt.Sprintf("%d, %d", placed[0].Window, skipped[0].Window)
	r = runStep(t, planScript, env, answer{stdout: stdout, rc: code}, nil)
	require.Equal(t, 0, r.code, r.log)
	assert.Equal(t, wantLegs[:1], legs(t, r.outputs["windows"]), "contexts narrows the matrix")
	assert.Equal(t, wantSkips[:1], legs(t, r.outputs["skipped"]))
}

func TestPlanStepRefuses(t *testing.T) {
	planScript := script(t, "export-vulkan.yml", "plan", "Plan the windows")
	for _, tc := range []struct {
		name, model, contexts string
		code                  int
		says                  string
	}{
		{"a window the backend does not have", "Qwen/Qwen3-0.6B", "1000 2048", 2, "::error::contexts: 1000 is not among this backend's windows"},
		{"a model the backend refuses", "google/gemma-3-1b-it", "2048", 2, "::error::Vulkan (GPU) does not take this model: Gemma 3 is not in ExecuTorch 1.4.0 export_llm's model list"},
		{"a model that is not eligible", "Qwen/Qwen3-8B", "2048", cli.ExitNotEligible, "::error::Qwen/Qwen3-8B is not eligible: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, code := realPlan(t, tc.model, "vulkan")
			env := map[string]string{"MODEL_ID": tc.model, "REVISION": "main", "BACKEND": "vulkan", "CONTEXTS": tc.contexts}
			r := runStep(t, planScript, env, answer{stdout: stdout, rc: code}, nil)
			assert.Equal(t, tc.code, r.code, r.log)
			assert.Contains(t, r.log, tc.says)
			assert.Empty(t, r.outputs["windows"], "a refused plan gives no matrix")
		})
	}
}

func TestExportStepTurnsASkipIntoAGreenJob(t *testing.T) {
	const reason = "window 32768 needs about 140.2 GiB; this runner has 23.4 GiB RAM + 24 GiB swap"
	stderr := "loading Qwen/Qwen3-0.6B\n" + reason + "\n"
	stdout := "::warning::Qwen/Qwen3-0.6B cannot be exported on this runner: " + reason + "\n"
	for _, tc := range []struct {
		file, backend string
		env           map[string]string
		args          string
		skipFile      string
		skip          legWindow
	}{
		{"export-qnn.yml", "qnn", map[string]string{"SOC": "SM8750"}, " --soc SM8750", "skipped-32768-SM8750.json",
			legWindow{Window: 32768, SoC: "SM8750", Reason: reason}},
		{"export-xnnpack.yml", "xnnpack", map[string]string{"QMODE": ""}, " --qmode ", "skipped-32768.json",
			legWindow{Window: 32768, Reason: reason}},
	} {
		exportScript := script(t, tc.file, "export", "Export")
		env := map[string]string{"MODEL_ID": "Qwen/Qwen3-0.6B", "REVISION": "main", "BACKEND": tc.backend, "CONTEXT": "32768", "WORK_DIR": "/runner/exe-expo-work"}
		for k, v := range tc.env {
			env[k] = v
		}
		for _, rc := range []int{0, 2, 4} {
			r := runStep(t, exportScript, env, answer{stdout, stderr, rc}, nil)
			want := rc
			if rc == cli.ExitSkipped {
				want = 0
			}
			assert.Equal(t, want, r.code, "%s, exe-expo exits %d: %s", tc.file, rc, r.log)
			require.Len(t, r.args, 1)
			assert.Regexp(t, `^export --backend `+tc.backend+` Qwen/Qwen3-0.6B --revision main --context 32768`+tc.args+` --out out --work /runner/exe-expo-work$`, r.args[0])
			assert.Contains(t, r.log, reason, "the tool's log reaches the job's log")
			data, err := os.ReadFile(filepath.Join(r.dir, "out", tc.skipFile))
			if rc != cli.ExitSkipped {
				assert.True(t, os.IsNotExist(err), "%s: exit %d recorded a skip", tc.file, rc)
				continue
			}
			require.NoError(t, err)
			var got legWindow
			require.NoError(t, json.Unmarshal(data, &got))
			assert.Equal(t, tc.skip, got)
		}
	}
}

// TestVerifyStepChecksEveryFile runs the verify job's check: `exe-expo smoke` over the whole
// folder; the files are listed, and the checked reports kept for publish, only when it
// passes; with nothing exported it calls nothing and still reports every skipped window.
func TestVerifyStepChecksEveryFile(t *testing.T) {
	verifyScript := script(t, "export-qnn.yml", "verify", "Check every file")
	env := map[string]string{"BACKEND": "qnn", "PLAN_SKIPPED": `[{"window":32768,"reason":"no runner"}]`}
	ptes := []string{"qnn/SM8750/a-2k.pte", "qnn/SM8650/a-2k.pte"}
	reports := []string{"qnn/SM8750/export-report-2k.json", "qnn/SM8650/export-report-2k.json"}
	for _, tc := range []struct {
		name     string
		exported bool
		rc, code int
		files    string
		calls    []string
	}{
		{"all pass", true, 0, 0, `["qnn/SM8650/a-2k.pte","qnn/SM8750/a-2k.pte"]`, []string{"smoke out --backend qnn"}},
		{"smoke fails", true, 2, 2, `[]`, []string{"smoke out --backend qnn"}},
		{"nothing exported", false, 0, 0, `[]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runStep(t, verifyScript, env, answer{rc: tc.rc}, func(dir string) {
				if !tc.exported {
					return
				}
				for _, p := range append(slices.Clone(ptes), reports...) {
					full := filepath.Join(dir, "out", p)
					require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
					require.NoError(t, os.WriteFile(full, []byte("x"), 0o644))
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, "out", "skipped-16384-SM8650.json"), []byte(`{"window":16384,"soc":"SM8650","reason":"gate"}`), 0o644))
			})
			assert.Equal(t, tc.code, r.code, r.log)
			assert.Equal(t, tc.files, r.outputs["files"])
			assert.Equal(t, tc.calls, r.args)
			want := []legWindow{{Window: 32768, Reason: "no runner"}}
			if tc.exported {
				want = append(want, legWindow{Window: 16384, SoC: "SM8650", Reason: "gate"})
			}
			assert.Equal(t, want, legs(t, r.outputs["skipped"]))
			for _, rep := range reports {
				_, err := os.Stat(filepath.Join(r.dir, "checked", rep))
				assert.Equal(t, tc.files != "[]", err == nil, "%s kept for publish: %v", rep, err)
			}
		})
	}
}

// TestVerifyStepGatesWithReference runs the verify check of an export workflow with a solve
// job (rendered as the golden with every command): after smoke passes, the gate grades the
// files against the solve job's fp32 reference when there is one, and its failure stops
// the publish.
func TestVerifyStepGatesWithReference(t *testing.T) {
	verifyScript := scriptAt(t, filepath.Join("testdata", "every-command", "export-xnnpack.yml"), "verify", "Check every file")
	smokeCall := "smoke out --backend xnnpack"
	gateCall := "gate out --source Qwen/Qwen3-0.6B --revision main --reference codes/gate.json --backend xnnpack --work "
	for _, tc := range []struct {
		name         string
		reference    bool
		gateRC, code int
		files        string
		calls        []string
	}{
		{"gate passes", true, 0, 0, `["xnnpack/a-2k.pte"]`, []string{smokeCall, gateCall}},
		{"gate fails", true, 2, 2, `[]`, []string{smokeCall, gateCall}},
		{"no reference", false, 2, 0, `["xnnpack/a-2k.pte"]`, []string{smokeCall}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BACKEND": "xnnpack", "MODEL_ID": "Qwen/Qwen3-0.6B", "REVISION": "main", "PLAN_SKIPPED": "[]", "STUB_GATE_RC": strconv.Itoa(tc.gateRC)}
			r := runStep(t, verifyScript, env, answer{}, func(dir string) {
				for _, p := range []string{"out/xnnpack/a-2k.pte", "out/xnnpack/export-report-2k.json"} {
					require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644))
				}
				if tc.reference {
					require.NoError(t, os.MkdirAll(filepath.Join(dir, "codes"), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(dir, "codes", "gate.json"), []byte("{}"), 0o644))
				}
			})
			assert.Equal(t, tc.code, r.code, r.log)
			assert.Equal(t, tc.files, r.outputs["files"])
			require.Len(t, r.args, len(tc.calls))
			for i, want := range tc.calls {
				assert.True(t, strings.HasPrefix(r.args[i], want), "call %d: %q, want %q…", i, r.args[i], want)
			}
		})
	}
}
