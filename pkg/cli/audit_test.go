package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/experimentalmachines/exe-expo/pkg/verify"
)

// probeStandin is a "python" that answers gate_probe.py's plan without a model: fp32 is
// confident (p 0.9) on every row with token = row index; the export gives fp32's token
// the probability in $PROBE_P and agrees on the argmax. On the fidelity text fp32 spreads
// 0.9 over its top k tokens (the rest 0.1), the export $PROBE_P (the rest 1 - $PROBE_P),
// agreeing on the argmax when $PROBE_P is over a half. It records which program it ran.
const probeStandin = `import json, math, os, sys
plan = json.load(sys.stdin)
rows = {}
p = float(os.environ.get("PROBE_P", "0.9"))
for i, r in enumerate(plan["rows"]):
    if plan["mode"] == "reference":
        rows[r["question"]] = {"token": i, "p": 0.9, "text": "t"}
    else:
        rows[r["question"]] = {"token": plan["fp32"][r["question"]], "p": p, "text": "t"}
out = {"rows": rows}
f = plan.get("fidelity")
if f and plan["mode"] == "reference":
    k = f["top_k"]
    out["fidelity"] = {"top_k": k, "tokens": list(range(f["tokens"])),
                       "positions": [{"ids": list(range(k)), "logp": [math.log(0.9 / k)] * k, "rest": 0.1}] * f["tokens"]}
elif f:
    out["fidelity"] = {"positions": [{"token": b[0] if p > 0.5 else b[1], "logp": [math.log(p / len(b))] * len(b), "rest": 1 - p} for b in f["buckets"]]}
with open(os.environ["PROBE_LOG"], "a") as log:
    log.write("%s %s %s\n" % (plan["mode"], plan["model"]["kind"], os.path.basename(plan["model"]["path"])))
print(json.dumps(out))
`

func TestAuditCommand(t *testing.T) {
	py3, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	dir := t.TempDir()
	py := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(py, []byte(probeAnswer(toolchainJSON)+"shift\nexec "+py3+" -c '"+probeStandin+"'\n"), 0o755))
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	repo := "experimentalmachines/SmolLM2-360M-Instruct-ExecuTorch"
	srv.MustAddModel(t, repo, map[string][]byte{
		"xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte": []byte("program 2k"),
		"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte": []byte("program 4k"),
		"vulkan/SmolLM2-360M-Instruct-8da4w-4k.pte":  []byte("vulkan"),
		"tokenizer.json": []byte("{}"),
	})
	var fetched []string
	old := auditSource
	auditSource = func(Env) func(ctx context.Context, id, dir string) error {
		return func(_ context.Context, id, dir string) error {
			fetched = append(fetched, id)
			return os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
		}
	}
	t.Cleanup(func() { auditSource = old })

	for _, tc := range []struct {
		name, p string
		args    []string
		code    int
		file    string
	}{
		{"first file, passes", "0.85", nil, ExitOK, "xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte"},
		{"the 4k window, fails", "0.1", []string{"--context", "4096"}, ExitFailed, "xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "probe.log")
			t.Setenv("PROBE_LOG", log)
			t.Setenv("PROBE_P", tc.p)
			work := filepath.Join(t.TempDir(), "work")
			args := append([]string{"audit", "HuggingFaceTB/SmolLM2-360M-Instruct", "--python", py, "--work", work}, tc.args...)
			code, out, errs := run(t, args...)
			require.Equal(t, tc.code, code, errs)
			var res verify.AuditResult
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			assert.Equal(t, repo, res.Repo)
			assert.Equal(t, tc.file, res.File)
			assert.NotEmpty(t, res.Revision)
			assert.Equal(t, 12, res.Gate.Graded)
			assert.Equal(t, tc.code == ExitOK, res.Gate.Passed)
			// The quality block: the gate's figures and the fidelity text's, KL(fp32 || export)
			// over the buckets: 0.9 log(0.9/p) + 0.1 log(0.1/(1-p)).
			q := res.Quality
			assert.True(t, q.Measured)
			assert.Equal(t, res.Gate.Passed, q.GatePassed)
			assert.Equal(t, 12, q.GateGraded)
			assert.InDelta(t, 0.9, q.GateFP32Mean, 1e-9)
			require.NotNil(t, q.Fidelity, "the audit's reference has the fidelity text")
			assert.Equal(t, 128, q.Fidelity.Positions)
			assert.Equal(t, "fidelity-text.txt", q.Fidelity.Text.File)
			pe := map[string]float64{"0.85": 0.85, "0.1": 0.1}[tc.p]
			assert.InDelta(t, 0.9*math.Log(0.9/pe)+0.1*math.Log(0.1/(1-pe)), q.Fidelity.MeanKL, 1e-9)
			assert.Equal(t, map[bool]float64{true: 1, false: 0}[pe > 0.5], q.Fidelity.NextTokenAgreement)
			got, err := os.ReadFile(filepath.Join(work, "published", filepath.Base(tc.file)))
			require.NoError(t, err)
			assert.Equal(t, "program "+map[string]string{"0.85": "2k", "0.1": "4k"}[tc.p], string(got))
			probes, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.Equal(t, "reference hf source\nmeasure pte "+filepath.Base(tc.file)+"\n", string(probes))
			assert.FileExists(t, filepath.Join(work, "gate.json"))
		})
	}
	assert.Equal(t, []string{"HuggingFaceTB/SmolLM2-360M-Instruct", "HuggingFaceTB/SmolLM2-360M-Instruct"}, fetched)

	for _, tc := range []struct {
		name string
		args []string
		errs string
	}{
		{"no such window", []string{"--context", "8192"}, "publishes no xnnpack file for a 8192-token window (*-8k.pte); it has xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte, xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"},
		{"a backend the runner cannot run", []string{"--backend", "vulkan"}, "audit: --backend vulkan: the gate runs files on ExecuTorch's x86 runner, which runs only xnnpack files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"audit", "HuggingFaceTB/SmolLM2-360M-Instruct", "--python", py, "--work", t.TempDir()}, tc.args...)
			code, _, errs := run(t, args...)
			assert.Equal(t, ExitFailed, code)
			assert.Contains(t, errs, tc.errs)
		})
	}
}
