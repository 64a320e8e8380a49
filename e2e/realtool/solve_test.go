package realtool

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/gate"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/tinymodel"
)

// TestSolveExportGate is the GPTQ path for real: exe-expo solve continues the calibration
// rows with the real fp32 transformers model, solves every linear including the output
// head and writes gate.json; export --codes builds the file with those codes; smoke runs
// it; and the gate grades it both ways: against its own source's reference it is graded
// and passes, against another model's reference it fails.
func TestSolveExportGate(t *testing.T) {
	t.Parallel()
	const family = "qwen3"
	f, err := tinymodel.Lookup(family)
	require.NoError(t, err)
	model := tiny(t, family, replyA, 1)
	codes := filepath.Join(t.TempDir(), "codes", "codes.pt")
	mustExeExpo(t, "solve", model, "--id", f.ID, "--out", codes, "--work", filepath.Join(t.TempDir(), "solve-work"), "--python", python(t))

	var solved struct {
		Linears           int `json:"linears"`
		EmptyReplies      int `json:"calibration_empty_replies"`
		CalibrationRows   int `json:"calibration_rows"`
		GateConfidentRows int `json:"gate_confident_rows"`
	}
	readJSON(t, filepath.Join(filepath.Dir(codes), "solve.json"), &solved)
	// 2 layers × 7 linears, and the output head.
	assert.Equal(t, 15, solved.Linears)
	assert.Positive(t, solved.CalibrationRows)
	assert.Zero(t, solved.EmptyReplies, "the taught fp32 model continues every calibration row")
	assert.Positive(t, solved.GateConfidentRows)
	out, err := exec.Command(python(t), "-c", `import sys, torch
codes = torch.load(sys.argv[1], weights_only=True)
print(" ".join(sorted(codes)))
for n, c in codes.items():
    assert c["qdata"].dtype == torch.int8 and int(c["qdata"].min()) >= -8 and int(c["qdata"].max()) <= 7, n
    assert c["scale"].shape[1] * 32 == c["qdata"].shape[1] and bool((c["scale"] > 0).all()), n
`, codes).CombinedOutput()
	require.NoError(t, err, "%s", out)
	names := strings.Fields(lastLines(string(out), 1))
	assert.Len(t, names, 15, "codes for every linear: %v", names)
	assert.Contains(t, names, "output", "the output head is solved too")
	var ref gate.Reference
	readJSON(t, filepath.Join(filepath.Dir(codes), "gate.json"), &ref)
	assert.NotEmpty(t, ref.Confident, "the taught fp32 model is confident on gate rows")

	e := export(t, "xnnpack", family, replyA, 1, "--codes", codes)
	assert.Equal(t, "gptq", e.report.Recipe["int4_codes"], "the report names the codes")
	t.Run("wrong codes", func(t *testing.T) { wrongCodes(t, family, codes) })
	checkFile(t, e, "XnnpackBackend")
	smokeRun(t, e)

	// Its own source's reference (the solve's gate.json): graded and passed.
	mustExeExpo(t, "gate", e.out, "--source", model, "--reference", filepath.Join(filepath.Dir(codes), "gate.json"), "--python", python(t))
	r := readReport(t, e)
	require.NotNil(t, r.Gate)
	assert.True(t, r.Gate.Passed, "gate against its own source: %v", r.Gate.Problems)
	assert.Positive(t, r.Gate.Graded, "rows graded")

	// Another model's reference: model B was taught another reply, so the file puts no
	// probability on B's tokens.
	other := tiny(t, family, replyB, 2)
	code, gout, errOut := exeExpo(t, "gate", e.out, "--source", other, "--reference", filepath.Join(t.TempDir(), "b-gate.json"), "--python", python(t))
	assert.Equal(t, 2, code, "gate against another model's reference must fail\n%s\n%s", gout, lastLines(errOut, 20))
	r = readReport(t, e)
	require.NotNil(t, r.Gate)
	assert.False(t, r.Gate.Passed, "gate against another model")
	assert.Positive(t, r.Gate.Graded, "rows graded against B")
}

func readReport(t *testing.T, e exported) *report.Report {
	t.Helper()
	paths, err := report.Find(e.out, e.report.Backend, "")
	require.NoError(t, err)
	require.Len(t, paths, 1)
	r, err := report.Read(paths[0])
	require.NoError(t, err)
	return r
}
