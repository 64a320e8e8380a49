package workflow

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
