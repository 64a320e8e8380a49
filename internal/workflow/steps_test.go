package workflow

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// These tests run the committed run: scripts with bash as Actions does (-eo pipefail),
// with a stand-in exe-expo on PATH that answers what a test gives it and records its
// arguments, so the wiring between the plan, the export legs and the checks is tested for
// real: exit codes, outputs. The checks' handoff is the real command: the stand-in hands
// it to this test binary, which runs the CLI (TestMain).

// stub is a stand-in exe-expo: it prints stdout and stderr and exits with rc, or, for
// inspect, fails the files whose name starts with "bad"; handoff runs for real.
const stub = `#!/bin/sh
if [ "$1" = handoff ]; then EXE_EXPO_WORKFLOW_CLI=1 exec "$EXE_EXPO_TEST_BINARY" "$@"; fi
printf '%s\n' "$*" >> "$STUB_ARGS"
res="" prev=""
for a in "$@"; do
  if [ "$prev" = --result ]; then res="$a"; fi
  prev="$a"
done
src="$STUB_RESULT"
if [ "$1" = gate ] && [ -s "$STUB_GATE_RESULT" ]; then src="$STUB_GATE_RESULT"; fi
if [ -n "$res" ] && [ -s "$src" ]; then mkdir -p "$(dirname "$res")" && cp "$src" "$res"; fi
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

// answer is what the stand-in exe-expo prints, the result it writes where --result says,
// and how it exits.
type answer struct {
	stdout, stderr string
	rc             int
	result         string
	// gateResult is the result gate writes, when it differs from the others'.
	gateResult string
}

// runStep runs script in a fresh folder, laid out by prepare when given, with env and the
// stand-in giving ans.
func runStep(t *testing.T, script string, env map[string]string, ans answer, prepare func(dir string)) stepRun {
	t.Helper()
	bash := needTool(t, "bash")
	dir, bin := t.TempDir(), t.TempDir()
	if prepare != nil {
		prepare(dir)
	}
	require.NoError(t, os.WriteFile(filepath.Join(bin, "exe-expo"), []byte(stub), 0o755))
	files := map[string]string{"STUB_STDOUT": ans.stdout, "STUB_STDERR": ans.stderr, "STUB_RESULT": ans.result, "STUB_GATE_RESULT": ans.gateResult, "GITHUB_OUTPUT": "", "STUB_ARGS": ""}
	self, err := os.Executable()
	require.NoError(t, err)
	vars := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "RUNNER_TEMP=" + t.TempDir(), "STUB_RC=" + strconv.Itoa(ans.rc),
		"EXE_EXPO_TEST_BINARY=" + self}
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
	r.outputs = githubOutputs(t, string(gh))
	args, err := os.ReadFile(files["STUB_ARGS"])
	require.NoError(t, err)
	if a := strings.TrimSpace(string(args)); a != "" {
		r.args = strings.Split(a, "\n")
	}
	return r
}

// githubOutputs reads a $GITHUB_OUTPUT file as the runner does: name=value lines, and
// name<<DELIMITER blocks ending at a line that is the delimiter.
func githubOutputs(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok && !strings.Contains(name, "=") {
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			require.Less(t, i, len(lines), "the output %s has no closing %s", name, delim)
			out[name] = strings.Join(value, "\n")
			continue
		}
		if k, v, ok := strings.Cut(lines[i], "="); ok {
			out[k] = v
		}
	}
	return out
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

// resultJSON is a result as the CLI writes it (internal/result), for the stand-in to leave.
func resultJSON(t *testing.T, command string, code int, reason string, o result.Outputs) string {
	t.Helper()
	r := result.New(command)
	r.Reason, r.Outputs = reason, o
	r.Finish(code)
	path := filepath.Join(t.TempDir(), "result.json")
	require.NoError(t, result.Write(path, r))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestExportStepTurnsASkipIntoAGreenJob: the export leg leaves the command's result in
// out/results/ whatever it did, and a skip (4) is a green job whose result verify reads.
func TestExportStepTurnsASkipIntoAGreenJob(t *testing.T) {
	const reason = "window 32768 needs about 140.2 GiB; this runner has 23.4 GiB RAM + 24 GiB swap"
	stderr := "loading Qwen/Qwen3-0.6B\nexport skipped: " + reason + "\n"
	for _, tc := range []struct {
		file, backend string
		env           map[string]string
		args          string
		resultFile    string
	}{
		{"export-qnn.yml", "qnn", map[string]string{"SOC": "SM8750"}, " --soc SM8750", "export-32768-SM8750.json"},
		{"export-xnnpack.yml", "xnnpack", map[string]string{"QMODE": ""}, " --qmode ", "export-32768.json"},
	} {
		exportScript := script(t, tc.file, "export", "Export")
		env := map[string]string{"MODEL_ID": "Qwen/Qwen3-0.6B", "REVISION": "main", "BACKEND": tc.backend, "CONTEXT": "32768", "WORK_DIR": "/runner/exe-expo-work"}
		for k, v := range tc.env {
			env[k] = v
		}
		for _, rc := range []int{0, 2, 4} {
			res := resultJSON(t, "export", rc, reason, result.Outputs{Skipped: []result.Skipped{{Window: 32768, SoC: tc.env["SOC"], Reason: reason}}})
			r := runStep(t, exportScript, env, answer{stderr: stderr, rc: rc, result: res}, nil)
			want := rc
			if rc == cli.ExitSkipped {
				want = 0
			}
			assert.Equal(t, want, r.code, "%s, exe-expo exits %d: %s", tc.file, rc, r.log)
			require.Len(t, r.args, 1)
			assert.Regexp(t, `^export --backend `+tc.backend+` Qwen/Qwen3-0.6B --revision main --context 32768`+tc.args+
				` --out out --work /runner/exe-expo-work --result out/results/`+tc.resultFile+`$`, r.args[0])
			assert.Contains(t, r.log, reason, "the tool's log reaches the job's log")
			data, err := os.ReadFile(filepath.Join(r.dir, "out", "results", tc.resultFile))
			require.NoError(t, err, "the result is uploaded with the files, for verify")
			assert.Equal(t, res, string(data))
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
		{"all pass", true, 0, 0, `["qnn/SM8650/a-2k.pte","qnn/SM8750/a-2k.pte"]`, []string{"smoke out --backend qnn --result "}},
		{"smoke fails", true, 2, 2, `[]`, []string{"smoke out --backend qnn --result "}},
		{"nothing exported", false, 0, 0, `[]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resultJSON(t, "smoke", tc.rc, "", result.Outputs{Files: []string{"qnn/SM8650/a-2k.pte", "qnn/SM8750/a-2k.pte"},
				Reports: reports, Skipped: []result.Skipped{{Window: 16384, SoC: "SM8650", Reason: "gate"}}})
			r := runStep(t, verifyScript, env, answer{rc: tc.rc, result: res}, func(dir string) {
				if !tc.exported {
					return
				}
				for _, p := range append(slices.Clone(ptes), reports...) {
					full := filepath.Join(dir, "out", p)
					require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
					require.NoError(t, os.WriteFile(full, []byte("x"), 0o644))
				}
			})
			assert.Equal(t, tc.code, r.code, r.log)
			assert.Equal(t, tc.files, r.outputs["files"])
			require.Len(t, r.args, len(tc.calls))
			for i, want := range tc.calls {
				assert.True(t, strings.HasPrefix(r.args[i], want), "call %d: %q, want %q…", i, r.args[i], want)
			}
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
// files against the solve job's fp32 reference when there is one. A gate that refused some
// windows' quantized files hands them to the fp32 fallback (its result kept for the
// fallback jobs) and passes the rest on; a gate that failed to run, or refused fp32 files,
// stops the publish.
func TestVerifyStepGatesWithReference(t *testing.T) {
	verifyScript := scriptAt(t, filepath.Join("testdata", "every-command", "export-xnnpack.yml"), "verify", "Check every file")
	smokeCall := "smoke out --backend xnnpack --source Qwen/Qwen3-0.6B --revision main --work /smoke --result "
	gateCall := "gate out --source Qwen/Qwen3-0.6B --revision main --reference codes/gate.json --backend xnnpack --work "
	passed := result.Outputs{Files: []string{"xnnpack/a-2k.pte", "xnnpack/a-4k.pte"}, Reports: []string{"xnnpack/export-report-2k.json", "xnnpack/export-report-4k.json"}}
	refused := result.Outputs{Files: []string{"xnnpack/a-2k.pte"}, Reports: []string{"xnnpack/export-report-2k.json"},
		Failed: []result.Failed{{Window: 4096, File: "xnnpack/a-4k.pte", QMode: "8da4w-gptq", Reason: "decision gate failed: 3 of 12 rows agree"}}}
	for _, tc := range []struct {
		name         string
		reference    bool
		qmode        string
		gateRC, code int
		gate         result.Outputs
		files        string
		failed       string
		checked      []string
		calls        []string
	}{
		{"gate passes", true, "", 0, 0, passed, `["xnnpack/a-2k.pte","xnnpack/a-4k.pte"]`, `[]`, []string{"2k", "4k"}, []string{smokeCall, gateCall}},
		{"gate refuses a window", true, "", 2, 0, refused, `["xnnpack/a-2k.pte"]`, `[4096]`, []string{"2k"}, []string{smokeCall, gateCall}},
		{"gate refuses an fp32 window", true, "fp32", 2, 2, refused, `[]`, `[]`, nil, []string{smokeCall, gateCall}},
		{"gate cannot run", true, "", 2, 2, result.Outputs{}, `[]`, `[]`, nil, []string{smokeCall, gateCall}},
		{"no reference", false, "", 2, 0, passed, `["xnnpack/a-2k.pte","xnnpack/a-4k.pte"]`, `[]`, []string{"2k", "4k"}, []string{smokeCall}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BACKEND": "xnnpack", "MODEL_ID": "Qwen/Qwen3-0.6B", "REVISION": "main", "PLAN_SKIPPED": "[]",
				"STUB_GATE_RC": strconv.Itoa(tc.gateRC), "QMODE": tc.qmode}
			res := resultJSON(t, "smoke", 0, "", passed)
			gateRes := resultJSON(t, "gate", tc.gateRC, "", tc.gate)
			r := runStep(t, verifyScript, env, answer{result: res, gateResult: gateRes}, func(dir string) {
				for _, p := range []string{"out/xnnpack/a-2k.pte", "out/xnnpack/export-report-2k.json", "out/xnnpack/a-4k.pte", "out/xnnpack/export-report-4k.json"} {
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
			assert.Equal(t, tc.failed, r.outputs["failed"])
			require.Len(t, r.args, len(tc.calls))
			for i, want := range tc.calls {
				assert.True(t, strings.HasPrefix(r.args[i], want), "call %d: %q, want %q…", i, r.args[i], want)
			}
			for _, w := range []string{"2k", "4k"} {
				_, err := os.Stat(filepath.Join(r.dir, "checked", "xnnpack", "export-report-"+w+".json"))
				assert.Equal(t, slices.Contains(tc.checked, w), err == nil, "the %s report kept for publish: %v", w, err)
			}
			_, err := os.Stat(filepath.Join(r.dir, "gate-result", "gate.json"))
			assert.Equal(t, tc.failed != `[]`, err == nil, "the gate's result kept for the fallback: %v", err)
		})
	}
}

// TestVerifyFallbackStep runs the fp32 fallback's check: smoke and gate over the fp32 files
// against the same fp32 reference; the outputs add the fp32 files to those verify passed
// and every skipped window (verify's, the fallback plan's, the fallback exports'), and the
// fp32 reports are kept for publish only when all pass.
func TestVerifyFallbackStep(t *testing.T) {
	checkScript := scriptAt(t, filepath.Join("testdata", "every-command", "export-xnnpack.yml"), "verify-fallback", "Check every fp32 file")
	fp32 := result.Outputs{Files: []string{"xnnpack/a-fp32-4k.pte"}, Reports: []string{"xnnpack/export-report-4k.json"}}
	for _, tc := range []struct {
		name           string
		exported       bool
		gateRC, code   int
		fp32, files    string
		skippedWindows []int
	}{
		{"fp32 passes", true, 0, 0, `["xnnpack/a-fp32-4k.pte"]`, `["xnnpack/a-2k.pte","xnnpack/a-fp32-4k.pte"]`, []int{32768, 16384}},
		{"fp32 fails the gate", true, 2, 2, `[]`, `["xnnpack/a-2k.pte"]`, []int{32768, 16384}},
		{"no fp32 file fits the phone", false, 0, 0, `[]`, `["xnnpack/a-2k.pte"]`, []int{32768, 16384}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BACKEND": "xnnpack", "MODEL_ID": "Qwen/Qwen3-0.6B", "REVISION": "main",
				"VERIFIED_FILES": `["xnnpack/a-2k.pte"]`, "VERIFIED_SKIPPED": `[{"window":32768,"reason":"no runner"}]`,
				"PLAN_SKIPPED": `[{"window":16384,"reason":"its 8da4w-gptq file failed the checks and the fp32 fallback would need 6.1 GB"}]`,
				"STUB_GATE_RC": strconv.Itoa(tc.gateRC)}
			res := resultJSON(t, "smoke", 0, "", fp32)
			gateRes := resultJSON(t, "gate", tc.gateRC, "", fp32)
			r := runStep(t, checkScript, env, answer{result: res, gateResult: gateRes}, func(dir string) {
				if !tc.exported {
					return
				}
				for _, p := range []string{"out/xnnpack/a-fp32-4k.pte", "out/xnnpack/export-report-4k.json"} {
					require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644))
				}
			})
			assert.Equal(t, tc.code, r.code, r.log)
			assert.Equal(t, tc.fp32, r.outputs["checked"])
			assert.Equal(t, tc.files, r.outputs["files"])
			var windows []int
			for _, l := range legs(t, r.outputs["skipped"]) {
				windows = append(windows, l.Window)
			}
			assert.Equal(t, tc.skippedWindows, windows)
			_, err := os.Stat(filepath.Join(r.dir, "checked", "xnnpack", "export-report-4k.json"))
			assert.Equal(t, tc.fp32 != `[]`, err == nil, "the fp32 report kept for publish: %v", err)
			if tc.exported {
				require.Len(t, r.args, 2)
				assert.True(t, strings.HasPrefix(r.args[1], "gate out --source Qwen/Qwen3-0.6B --revision main --reference codes/gate.json --backend xnnpack"), r.args[1])
			}
		})
	}
}

// TestQNNCalibratesOncePerChip: the calibrate job writes one calibration per chip
// (export --calibrate-only) into the artifact every export job of that chip downloads; an
// export job passes the file when it is there and calibrates itself when the calibrate job
// failed (no file), and runs either way.
func TestQNNCalibratesOncePerChip(t *testing.T) {
	env := map[string]string{"MODEL_ID": "Qwen/Qwen3-0.6B", "REVISION": "main", "BACKEND": "qnn", "CONTEXT": "8192", "SOC": "SM8750", "WORK_DIR": "/runner/exe-expo-work"}
	r := runStep(t, script(t, "export-qnn.yml", "calibrate", "Calibrate"), env, answer{}, nil)
	require.Equal(t, 0, r.code, r.log)
	require.Len(t, r.args, 1)
	assert.Equal(t, "export --backend qnn Qwen/Qwen3-0.6B --revision main --soc SM8750 --calibrate-only --calibration-out calibration/calibration.pt --out out --work /runner/exe-expo-work", r.args[0])

	exportScript := script(t, "export-qnn.yml", "export", "Export")
	for _, tc := range []struct {
		name string
		file bool
		want string
	}{
		{"with the calibrate job's file", true, " --calibration calibration/calibration.pt --out out"},
		{"without it", false, " --out out"},
	} {
		r := runStep(t, exportScript, env, answer{result: resultJSON(t, "export", 0, "", result.Outputs{})}, func(dir string) {
			if tc.file {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "calibration"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "calibration", "calibration.pt"), []byte("encodings"), 0o644))
			}
		})
		require.Equal(t, 0, r.code, "%s: %s", tc.name, r.log)
		require.Len(t, r.args, 1)
		assert.Contains(t, r.args[0], "--soc SM8750"+tc.want, tc.name)
	}

	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(root, OutputDir, name))
		require.NoError(t, err)
		return data
	}
	jobs := decode(t, read("export-qnn.yml")).jobs()
	calibrate, export := jobs["calibrate"], jobs["export"]
	assert.Equal(t, "plan", calibrate["needs"])
	assert.Equal(t, []any{"plan", "calibrate"}, export["needs"], "export jobs wait for the calibration")
	assert.NotContains(t, export["if"], "needs.calibrate.result", "a failed calibrate job leaves the exports to calibrate themselves")
	assert.Equal(t, "needs.calibrate.result == 'success'", step(t, export, "Download the calibration")["if"])
	assert.Equal(t, "calibration-qnn-${{ matrix.soc }}", step(t, export, "Download the calibration")["with"].(map[string]any)["name"])
	upload := step(t, calibrate, "Upload the calibration")["with"].(map[string]any)
	assert.Equal(t, "calibration-qnn-${{ matrix.soc }}", upload["name"])
	assert.Equal(t, "error", upload["if-no-files-found"])
	assert.NotRegexp(t, `^qnn-`, upload["name"], "verify and publish download every qnn-* artifact into out/")
	for _, name := range []string{"export-xnnpack.yml", "export-mediatek.yml"} {
		_, ok := decode(t, read(name)).jobs()["calibrate"]
		assert.False(t, ok, "%s has no calibrate job", name)
	}
}
