package gate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/gate"
)

func rows(t *testing.T) gate.Rows {
	t.Helper()
	c, err := config.Default()
	require.NoError(t, err)
	return gate.RowsFrom(c.Gate)
}

// figures builds both sides from per-row numbers: fp32 p and export p of fp32's token on
// the 12 search rows, whether the export's argmax is fp32's token there, and how many of
// the 4 quiet rows the export answers like fp32. fp32's search tokens differ from its quiet
// tokens unless quietTokens says otherwise.
type figures struct {
	fp32, export []float64
	agree        []bool
	quietAgree   int
	quietTokens  bool
}

func (f figures) build(t *testing.T, r gate.Rows) (gate.Reference, gate.Measured) {
	t.Helper()
	require.Len(t, f.fp32, len(r.Search))
	id := gate.PromptID{File: "p.json", SHA256: "ab"}
	ref := gate.Reference{Rows: map[string]gate.Token{}, Prompt: id}
	got := gate.Measured{Rows: map[string]gate.Answer{}, Prompt: id}
	for i, s := range r.Search {
		tok := 1000 + i
		if f.quietTokens {
			tok = 2000 + i%len(r.Quiet)
		}
		ref.Rows[s.Question] = gate.Token{Token: tok, P: f.fp32[i], Text: "x"}
		e := gate.Answer{P: f.export[i], Token: tok}
		if !f.agree[i] {
			e.Token = 7
		}
		got.Rows[s.Question] = e
	}
	for j, q := range r.Quiet {
		ref.Rows[q] = gate.Token{Token: 2000 + j, P: 0.9}
		e := gate.Answer{P: 0.8, Token: 2000 + j}
		if j >= f.quietAgree {
			e.Token = 8
		}
		got.Rows[q] = e
	}
	return ref, got
}

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func agreeing(n, yes int) []bool {
	out := make([]bool, n)
	for i := 0; i < yes; i++ {
		out[i] = true
	}
	return out
}

// TestScoreReferenceFigures grades the reference system's own figures (docs/research/checks.md,
// "Decision gate"): the
// round-to-nearest SmolLM2-135M fails on its shortfall, the GPTQ rows of the calibration
// table pass, and RTN on the same table fails on both mean and agreement.
func TestScoreReferenceFigures(t *testing.T) {
	r := rows(t)
	undecided := fill(8, 0.3)
	for _, tc := range []struct {
		name              string
		f                 figures
		graded, agreed    int
		fp32Mean, expMean float64
		problems          []string
	}{
		{"RTN SmolLM2-135M: 0.190 against 0.583", figures{
			fp32:   append([]float64{0.55, 0.60, 0.58, 0.602}, undecided...),
			export: append([]float64{0.15, 0.20, 0.22, 0.19}, fill(8, 0.2)...),
			agree:  agreeing(12, 12), quietAgree: 4},
			4, 4, 0.583, 0.190, []string{"mean probability of 0.190 against fp32's 0.583 over 4 graded rows, 0.393 short; at most 0.25"}},
		{"RTN table row: 0.049, gap 0.772, kept 0/12", figures{fp32: fill(12, 0.821), export: fill(12, 0.049), agree: agreeing(12, 0), quietAgree: 4},
			12, 0, 0.821, 0.049, []string{"0.772 short", "top token is fp32's on 0 of 12 graded rows; at least 90% must agree"}},
		{"GPTQ without tool schema: 0.730, gap 0.092, 12/12", figures{fp32: fill(12, 0.822), export: fill(12, 0.730), agree: agreeing(12, 12), quietAgree: 4},
			12, 12, 0.822, 0.730, nil},
		{"GPTQ v2 published: 0.701, gap 0.120, 12/12", figures{fp32: fill(12, 0.821), export: fill(12, 0.701), agree: agreeing(12, 12), quietAgree: 4},
			12, 12, 0.821, 0.701, nil},
		{"GPTQ on abliterated: 0.945, 0.123 over, 12/12", figures{fp32: fill(12, 0.822), export: fill(12, 0.945), agree: agreeing(12, 12), quietAgree: 3},
			12, 12, 0.822, 0.945, nil},
		{"10 of 12 agree fails (11 needed)", figures{fp32: fill(12, 0.8), export: fill(12, 0.7), agree: agreeing(12, 10), quietAgree: 4},
			12, 10, 0.8, 0.7, []string{"top token is fp32's on 10 of 12 graded rows"}},
		{"11 of 12 agree passes", figures{fp32: fill(12, 0.8), export: fill(12, 0.7), agree: agreeing(12, 11), quietAgree: 4},
			12, 11, 0.8, 0.7, nil},
		{"fp32 confident on no row", figures{fp32: fill(12, 0.5), export: fill(12, 0.5), agree: agreeing(12, 12), quietAgree: 4},
			0, 0, 0, 0, []string{"fp32 is confident (p > 0.5) on no search row, so the gate has nothing to grade"}},
		{"quiet rows failing", figures{fp32: fill(12, 0.8), export: fill(12, 0.8), agree: agreeing(12, 12), quietAgree: 2},
			12, 12, 0.8, 0.8, []string{"the export answers 2 of 4 quiet rows like fp32; at least 3 must"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, got := tc.f.build(t, r)
			res, err := gate.Score(r, ref, got)
			require.NoError(t, err)
			assert.Equal(t, tc.graded, res.Graded)
			assert.Equal(t, tc.agreed, res.Agreed)
			assert.InDelta(t, tc.fp32Mean, res.FP32Mean, 1e-9)
			assert.InDelta(t, tc.expMean, res.ExportMean, 1e-9)
			assert.InDelta(t, tc.fp32Mean-tc.expMean, res.Shortfall, 1e-9)
			assert.Equal(t, 12-tc.graded, len(res.FP32UndecidedRows))
			assert.Equal(t, 4, res.QuietRows)
			assert.Equal(t, len(tc.problems) == 0, res.Passed, res.Problems)
			require.Len(t, res.Problems, len(tc.problems), res.Problems)
			for i, p := range tc.problems {
				assert.Contains(t, res.Problems[i], p)
			}
			assert.Len(t, res.Rows, 16)
			if res.Passed {
				assert.Contains(t, res.Verdict(), "decision gate: passed")
			} else {
				assert.Equal(t, "decision gate: failed: "+res.Problems[0], res.Verdict()[:len("decision gate: failed: ")+len(res.Problems[0])])
			}
		})
	}
}

// TestMeasuresToolCalling: the gate measures tool calling only when at least half of the
// graded rows' fp32 tokens are not tokens fp32 starts a quiet answer with.
func TestMeasuresToolCalling(t *testing.T) {
	r := rows(t)
	for _, quietTokens := range []bool{false, true} {
		ref, got := figures{fp32: fill(12, 0.9), export: fill(12, 0.9), agree: agreeing(12, 12), quietAgree: 4, quietTokens: quietTokens}.build(t, r)
		res, err := gate.Score(r, ref, got)
		require.NoError(t, err)
		assert.Equal(t, !quietTokens, res.MeasuresToolCalling)
		assert.True(t, res.Passed, "informational only")
	}
}

func TestScoreRefusesIncomparable(t *testing.T) {
	r := rows(t)
	f := figures{fp32: fill(12, 0.9), export: fill(12, 0.9), agree: agreeing(12, 12), quietAgree: 4}
	ref, got := f.build(t, r)
	got.Prompt.SHA256 = "cd"
	_, err := gate.Score(r, ref, got)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scores compare only across the same prompts")

	ref, got = f.build(t, r)
	delete(got.Rows, "What is 8 times 7?")
	_, err = gate.Score(r, ref, got)
	assert.EqualError(t, err, `the export's measurement has no row "What is 8 times 7?"`)

	ref, got = f.build(t, r)
	delete(ref.Rows, r.Search[3].Question)
	_, err = gate.Score(r, ref, got)
	assert.EqualError(t, err, `the fp32 reference has no row "Which country is Nassau the capital of?"`)
}

func TestRowsCarryTheTrailer(t *testing.T) {
	r := rows(t)
	require.Len(t, r.Search, 12)
	assert.Equal(t, "Which US state is Concord the capital of? (This question names Concord. Look it up with web_search before answering rather than recalling it, and answer from what the search returns.)", r.Search[0].User)
	assert.Len(t, r.Quiet, 4)
}

func TestLoadPrompt(t *testing.T) {
	p, id, err := gate.LoadPrompt("")
	require.NoError(t, err)
	assert.Equal(t, gate.NeutralPromptName, id.File)
	assert.Len(t, id.SHA256, 64)
	assert.Len(t, p.Primer, 4)
	assert.Equal(t, "Today is 2026-09-10.", p.Primer[0].Content)
	assert.Equal(t, "Ready.", p.Primer[3].Content)
	require.Len(t, p.Tools, 1)

	dir := t.TempDir()
	own := filepath.Join(dir, "app.json")
	require.NoError(t, os.WriteFile(own, []byte(`{"system": "s", "primer": [], "tools": []}`), 0o644))
	_, id2, err := gate.LoadPrompt(own)
	require.NoError(t, err)
	assert.Equal(t, own, id2.File)
	assert.NotEqual(t, id.SHA256, id2.SHA256, "a different file is a different prompt")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"system": "s", "primer": [{"role": "tool", "content": "x"}]}`), 0o644))
	_, _, err = gate.LoadPrompt(bad)
	assert.EqualError(t, err, "the gate's prompt file "+bad+`: primer turn 1 has role "tool", not user or assistant`)

	_, _, err = gate.LoadPrompt(filepath.Join(dir, "missing.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.json")
	assert.NotContains(t, err.Error(), "open ")
}
