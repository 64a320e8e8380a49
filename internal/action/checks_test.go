package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// exportFolder writes reports into a fresh export folder as export and the checks leave
// them, by path in the folder.
func exportFolder(t *testing.T, reports map[string]*report.Report) string {
	t.Helper()
	out := t.TempDir()
	for name, r := range reports {
		path := filepath.Join(out, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, report.Write(path, r))
	}
	return out
}

func xnnReport(label string, size *check.SizeResult, sm *smoke.Result, g *gate.Result) *report.Report {
	return &report.Report{
		Backend: "xnnpack", OutputRepo: "experimentalmachines/M-1B-ExecuTorch",
		Files:           []report.File{{Path: "xnnpack/m-" + label + ".pte"}, {Path: "tokenizer.json"}},
		StructuralCheck: []check.Result{{Passed: true}},
		SizeCheck:       size, Smoke: sm, Gate: g,
	}
}

// TestChecks: after smoke or gate, passed says whether the command passed and files lists
// what its result says passed; a failure is annotated with the result's reason.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		fake          fakeCLI
		code          int
		outputs       map[string]string
		log           string
	}{
		{"smoke passed", "smoke", fakeCLI{stdout: "xnnpack/export-report-2k.json: passed\n", outputs: result.Outputs{Files: []string{"xnnpack/m-2k.pte", "xnnpack/m-4k.pte"}}}, 0,
			map[string]string{"passed": "true", "files": `["xnnpack/m-2k.pte","xnnpack/m-4k.pte"]`, "failed": `[]`},
			"xnnpack/export-report-2k.json: passed\n"},
		{"smoke blocked one window", "smoke", fakeCLI{code: 2, outputs: result.Outputs{Files: []string{"xnnpack/m-2k.pte"},
			Failed: []result.Failed{{Window: 4096, File: "xnnpack/m-4k.pte", QMode: "8da4w", Reason: "smoke test failed: the reply does not name Paris"}}},
			reason: "smoke: 1 of 2 file(s) cannot be published: xnnpack/export-report-4k.json: smoke test failed: the reply does not name Paris"}, 2,
			map[string]string{"passed": "false", "files": `["xnnpack/m-2k.pte"]`,
				"failed": `[{"window":4096,"file":"xnnpack/m-4k.pte","qmode":"8da4w","reason":"smoke test failed: the reply does not name Paris"}]`},
			"::error title=smoke::smoke: 1 of 2 file(s) cannot be published: xnnpack/export-report-4k.json: smoke test failed: the reply does not name Paris\n"},
		{"smoke on a folder without reports", "smoke", fakeCLI{code: 2, stderr: "noise\n", reason: "smoke: out holds no export report"}, 2,
			map[string]string{"passed": "false", "files": `[]`, "failed": `[]`},
			"::error title=smoke::smoke: out holds no export report\n"},
		{"gate passed", "gate", fakeCLI{outputs: result.Outputs{Files: []string{"vulkan/m-2k.pte", "xnnpack/m-2k.pte"}}}, 0,
			map[string]string{"passed": "true", "files": `["vulkan/m-2k.pte","xnnpack/m-2k.pte"]`, "failed": `[]`}, ""},
		{"gate left no result", "gate", fakeCLI{noResult: true}, 2,
			map[string]string{"passed": "false", "files": `[]`, "failed": `[]`}, "::error title=gate::exe-expo exited with code 0 and left no result to say why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, map[string]string{"out": t.TempDir(), "source": "fp32"})
			code := actionFuncs[tc.command](s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.outputs, s.outputs(t))
			if strings.HasSuffix(tc.log, "say why") {
				assert.True(t, strings.HasPrefix(s.log.String(), tc.log), s.log.String())
			} else {
				assert.Equal(t, tc.log, s.log.String())
			}
		})
	}
}

// TestPublishOutputs: after a publish (or a dry run) the outputs are the repo and page its
// result names; a refusal has none, and its reason is the annotation.
func TestPublishOutputs(t *testing.T) {
	made := result.Outputs{Repo: "me/Mine", URL: "http://127.0.0.1:8080/me/Mine"}
	for _, tc := range []struct {
		name    string
		fake    fakeCLI
		code    int
		outputs map[string]string
		log     string
	}{
		{"published", fakeCLI{stdout: "xnnpack 2k: http://127.0.0.1:8080/me/Mine/commit/1\n", outputs: made}, 0,
			map[string]string{"repo": "me/Mine", "url": "http://127.0.0.1:8080/me/Mine"}, "xnnpack 2k: http://127.0.0.1:8080/me/Mine/commit/1\n"},
		{"a refusal has no outputs", fakeCLI{code: 2, reason: "publish: no Hub token: set HF_TOKEN"}, 2, map[string]string{},
			"::error title=publish::publish: no Hub token: set HF_TOKEN\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, map[string]string{"out": t.TempDir()})
			code := Publish(s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.outputs, s.outputs(t))
			assert.Equal(t, tc.log, s.log.String())
		})
	}
}
