package action

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/check"
	"github.com/experimentalmachines/exe-expo/pkg/gate"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/smoke"
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
// the .pte files whose reports the check judged with nothing blocking; a blocked file is
// the error annotation.
func TestChecks(t *testing.T) {
	okSize, okSmoke := &check.SizeResult{Passed: true}, &smoke.Result{Passed: true}
	badSmoke := &smoke.Result{Problems: []string{"the reply does not name Paris"}}
	okGate, badGate := &gate.Result{Passed: true}, &gate.Result{Problems: []string{"KL 0.2 above 0.05"}}
	vulkan := &report.Report{Backend: "vulkan", Files: []report.File{{Path: "vulkan/m-2k.pte"}}, StructuralCheck: []check.Result{{Passed: true}}, SizeCheck: okSize}
	for _, tc := range []struct {
		name, command string
		reports       map[string]*report.Report
		fake          fakeCLI
		code          int
		outputs       map[string]string
		log           string
	}{
		{"smoke passed", "smoke", map[string]*report.Report{
			"xnnpack/export-report-2k.json": xnnReport("2k", okSize, okSmoke, nil), "xnnpack/export-report-4k.json": xnnReport("4k", okSize, okSmoke, nil)},
			fakeCLI{stdout: "xnnpack/export-report-2k.json: passed\n"}, 0,
			map[string]string{"passed": "true", "files": `["xnnpack/m-2k.pte","xnnpack/m-4k.pte"]`},
			"xnnpack/export-report-2k.json: passed\n"},
		{"smoke blocked one window", "smoke", map[string]*report.Report{
			"xnnpack/export-report-2k.json": xnnReport("2k", okSize, okSmoke, nil), "xnnpack/export-report-4k.json": xnnReport("4k", okSize, badSmoke, nil)},
			fakeCLI{code: 2}, 2,
			map[string]string{"passed": "false", "files": `["xnnpack/m-2k.pte"]`},
			"::error title=smoke::xnnpack/export-report-4k.json: smoke test failed: the reply does not name Paris\n"},
		{"smoke failed before judging a window", "smoke", map[string]*report.Report{
			"xnnpack/export-report-2k.json": xnnReport("2k", okSize, okSmoke, nil), "xnnpack/export-report-4k.json": xnnReport("4k", nil, nil, nil)},
			fakeCLI{code: 2, stderr: "smoke: smoke run of xnnpack/m-4k.pte: python exited with 1\n"}, 2,
			map[string]string{"passed": "false", "files": `["xnnpack/m-2k.pte"]`},
			"::error title=smoke::smoke: smoke run of xnnpack/m-4k.pte: python exited with 1\n"},
		{"smoke on a folder without reports", "smoke", nil,
			fakeCLI{code: 2, stderr: "smoke: out holds no export report\n"}, 2,
			map[string]string{"passed": "false", "files": `[]`},
			"::error title=smoke::smoke: out holds no export report\n"},
		{"gate: vulkan files are not gated and pass", "gate", map[string]*report.Report{
			"xnnpack/export-report-2k.json": xnnReport("2k", okSize, okSmoke, okGate), "xnnpack/export-report-4k.json": xnnReport("4k", okSize, okSmoke, badGate)},
			fakeCLI{code: 2}, 2,
			map[string]string{"passed": "false", "files": `["xnnpack/m-2k.pte"]`},
			"::error title=gate::xnnpack/export-report-4k.json: decision gate failed: KL 0.2 above 0.05\n"},
		{"gate passed, with a vulkan window", "gate", map[string]*report.Report{
			"xnnpack/export-report-2k.json": xnnReport("2k", okSize, okSmoke, okGate), "vulkan/export-report-2k.json": vulkan},
			fakeCLI{}, 0,
			map[string]string{"passed": "true", "files": `["vulkan/m-2k.pte","xnnpack/m-2k.pte"]`}, ""},
		{"gate not yet run on an xnnpack window", "gate", map[string]*report.Report{
			"xnnpack/export-report-2k.json": xnnReport("2k", okSize, okSmoke, okGate), "xnnpack/export-report-4k.json": xnnReport("4k", okSize, okSmoke, nil)},
			fakeCLI{code: 2, stderr: "gate: gate measure of out/xnnpack/m-4k.pte: killed\n"}, 2,
			map[string]string{"passed": "false", "files": `["xnnpack/m-2k.pte"]`},
			"::error title=gate::gate: gate measure of out/xnnpack/m-4k.pte: killed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := exportFolder(t, tc.reports)
			s := newStep(t, map[string]string{"out": out, "source": "fp32"})
			code := actionFuncs[tc.command](s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.outputs, s.outputs(t))
			assert.Equal(t, tc.log, s.log.String())
		})
	}
}

// TestPublishOutputs: after a publish the outputs name the repo (the input, else the
// reports' output_repo) and its page on the Hub the CLI talked to.
func TestPublishOutputs(t *testing.T) {
	out := exportFolder(t, map[string]*report.Report{"xnnpack/export-report-2k.json": xnnReport("2k", nil, nil, nil)})
	for _, tc := range []struct {
		name    string
		inputs  map[string]string
		env     map[string]string
		fake    fakeCLI
		code    int
		outputs map[string]string
	}{
		{"the reports' repo on the public Hub", nil, nil, fakeCLI{stdout: "xnnpack 2k: https://huggingface.co/x/commit/1\n"}, 0,
			map[string]string{"repo": "experimentalmachines/M-1B-ExecuTorch", "url": "https://huggingface.co/experimentalmachines/M-1B-ExecuTorch"}},
		{"the repo input on HF_ENDPOINT", map[string]string{"repo": "me/Mine"}, map[string]string{"HF_ENDPOINT": "http://127.0.0.1:8080/"}, fakeCLI{}, 0,
			map[string]string{"repo": "me/Mine", "url": "http://127.0.0.1:8080/me/Mine"}},
		{"a dry run names the repo too", map[string]string{"dry-run": "true", "backend": "xnnpack", "context": "2048"}, nil, fakeCLI{}, 0,
			map[string]string{"repo": "experimentalmachines/M-1B-ExecuTorch", "url": "https://huggingface.co/experimentalmachines/M-1B-ExecuTorch"}},
		{"a refusal has no outputs", nil, nil, fakeCLI{code: 2, stderr: "publish: no Hub token: set HF_TOKEN\n"}, 2, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs := map[string]string{"out": out}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			s := newStep(t, inputs)
			for k, v := range tc.env {
				s.env[k] = v
			}
			code := Publish(s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.outputs, s.outputs(t))
			if code != 0 {
				assert.Equal(t, "::error title=publish::publish: no Hub token: set HF_TOKEN\n", s.log.String())
			}
		})
	}
}
