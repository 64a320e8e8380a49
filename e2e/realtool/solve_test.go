package realtool

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/publish"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestSolveExportGate is the GPTQ path for real: exe-expo solve continues the calibration
// rows with the real fp32 transformers model, solves every linear including the output
// head and writes gate.json; export --codes builds the file with those codes; smoke runs
// it; and the gate grades it both ways: against its own source's reference it is graded
// and passes, against another model's reference it fails.
func TestSolveExportGate(t *testing.T) {
	t.Parallel()
	const family = "qwen3"
	model := tiny(t, family, replyA, 1)
	codes := filepath.Join(solveOnce(t, family, replyA, 1), "codes.pt")

	var solved struct {
		Linears               int `json:"linears"`
		EmptyReplies          int `json:"calibration_empty_replies"`
		CalibrationRows       int `json:"calibration_rows"`
		GateConfidentRows     int `json:"gate_confident_rows"`
		GateFidelityPositions int `json:"gate_fidelity_positions"`
	}
	readJSON(t, filepath.Join(filepath.Dir(codes), "solve.json"), &solved)
	// 2 layers × 7 linears, and the output head.
	assert.Equal(t, 15, solved.Linears)
	assert.Positive(t, solved.CalibrationRows)
	assert.Zero(t, solved.EmptyReplies, "the taught fp32 model continues every calibration row")
	assert.Positive(t, solved.GateConfidentRows)
	assert.Equal(t, 2048, solved.GateFidelityPositions, "gate.json holds fp32 on the fidelity text")
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
	require.NotNil(t, ref.Fidelity, "gate.json holds fp32 on the fidelity text")
	assert.Len(t, ref.Fidelity.Tokens, 2048, "the text's first 2,048 tokens, by the real tokenizer")
	assert.Equal(t, 32, ref.Fidelity.TopK)
	assert.NoError(t, ref.Fidelity.CheckReference())

	e := copyExport(t, export(t, "xnnpack", family, replyA, 1, "--codes", codes))
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
	right := fidelity(t, r)
	t.Logf("against its own source: gate %.3f (fp32 %.3f) on %d rows; next token %.4f over %d positions, mean KL %.5f (max %.4f)",
		r.Gate.ExportMean, r.Gate.FP32Mean, r.Gate.Graded, right.NextTokenAgreement, right.Positions, right.MeanKL, right.MaxKL)
	cardShowsQuality(t, e, right)

	// Another model's reference: model B was taught another reply, so the file puts no
	// probability on B's tokens.
	other := otherModel(t)
	code, gout, errOut := exeExpo(t, "gate", e.out, "--source", other, "--reference", filepath.Join(t.TempDir(), "b-gate.json"), "--python", python(t))
	assert.Equal(t, 2, code, "gate against another model's reference must fail\n%s\n%s", gout, lastLines(errOut, 20))
	r = readReport(t, e)
	require.NotNil(t, r.Gate)
	assert.False(t, r.Gate.Passed, "gate against another model")
	assert.Positive(t, r.Gate.Graded, "rows graded against B")
	wrong := fidelity(t, r)
	t.Logf("against another model: gate %.3f (fp32 %.3f) on %d rows; next token %.4f over %d positions, mean KL %.5f (max %.4f)",
		r.Gate.ExportMean, r.Gate.FP32Mean, r.Gate.Graded, wrong.NextTokenAgreement, wrong.Positions, wrong.MeanKL, wrong.MaxKL)
	assert.Less(t, wrong.NextTokenAgreement, right.NextTokenAgreement, "the file agrees less with another model than with its source")
	assert.Greater(t, wrong.MeanKL, right.MeanKL, "the file is further from another model than from its source")
}

// fidelity checks the report's fidelity figures are there and in range, in the gate result
// and in the quality block alike, and returns them.
func fidelity(t *testing.T, r *report.Report) gate.Fidelity {
	t.Helper()
	require.NotNil(t, r.Gate.Fidelity, "the gate measured the fidelity text: %s", r.Gate.FidelityMissing)
	f := *r.Gate.Fidelity
	assert.Equal(t, 2048, f.Positions)
	assert.Equal(t, "fidelity-text.txt", f.Text.File)
	require.NotNil(t, f.Deep, "the deep positions' figures")
	assert.Equal(t, 1024, f.Deep.From)
	assert.Equal(t, 1024, f.Deep.Positions)
	assert.GreaterOrEqual(t, f.Deep.MaxKL, f.Deep.MeanKL)
	assert.GreaterOrEqual(t, f.NextTokenAgreement, 0.0)
	assert.LessOrEqual(t, f.NextTokenAgreement, 1.0)
	assert.GreaterOrEqual(t, f.MeanKL, 0.0)
	assert.GreaterOrEqual(t, f.MaxKL, f.MeanKL)
	require.NotNil(t, r.Quality, "the report's quality block")
	assert.True(t, r.Quality.Measured)
	assert.Equal(t, r.Gate.ExportMean, r.Quality.GateExportMean)
	assert.Equal(t, r.Gate.FP32Mean, r.Quality.GateFP32Mean)
	assert.Equal(t, r.Gate.Graded, r.Quality.GateGraded)
	require.NotNil(t, r.Quality.Fidelity)
	assert.Equal(t, f, *r.Quality.Fidelity)
	return f
}

// cardShowsQuality builds the commit publish would make from the real report (no Hub is
// read: a new repo) and finds the quality column in the card's files table and the quality
// in the folder's config.json.
func cardShowsQuality(t *testing.T, e exported, f gate.Fidelity) {
	t.Helper()
	paths, err := report.Find(e.out, e.report.Backend, "")
	require.NoError(t, err)
	w, err := publish.Load(e.out, paths[0], "")
	require.NoError(t, err)
	p, err := publish.Build(context.Background(), nil, w, "")
	require.NoError(t, err)
	assert.Contains(t, p.Card, "| Smoke test | Quality vs fp32 |")
	cell := fmt.Sprintf("| next token %.1f%%, KL %.3f; deep %.1f%%, KL %.3f; gate ", 100*f.NextTokenAgreement, f.MeanKL, 100*f.Deep.NextTokenAgreement, f.Deep.MeanKL)
	assert.Contains(t, p.Card, cell, "the file's row shows its figures:\n%s", p.Card)
	assert.Contains(t, p.Card, "Quality against the fp32 source: *next token* is the share of the 2048 positions")
	var cfg struct {
		Variants []struct {
			Quality *struct {
				NextTokenAgreement *float64 `json:"next_token_agreement"`
				MeanKL             *float64 `json:"mean_kl"`
				GateExportMean     float64  `json:"gate_export_mean"`
			} `json:"quality"`
		} `json:"variants"`
	}
	found := false
	for _, c := range p.Add {
		if path.Base(c.PathInRepo) == "config.json" {
			require.NoError(t, json.Unmarshal(c.Content, &cfg))
			found = true
		}
	}
	require.True(t, found, "the commit writes the folder's config.json")
	require.Len(t, cfg.Variants, 1)
	q := cfg.Variants[0].Quality
	require.NotNil(t, q, "config.json's variant has its quality")
	require.NotNil(t, q.NextTokenAgreement)
	require.NotNil(t, q.MeanKL)
	assert.Equal(t, f.NextTokenAgreement, *q.NextTokenAgreement)
	assert.Equal(t, f.MeanKL, *q.MeanKL)
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
