package gate_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// TestCompareFidelity: identical distributions give agreement 1 and KL 0; a file that
// moves fp32's argmax loses that position; the bucketed KL is the coarse-grained KL, never
// above the full one, and exact when the buckets hold every token (k = V).
func TestCompareFidelity(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fp32, export []dist
		k            int
		agreed       int
		// exact: the buckets lose nothing (k = V, or k = V - 1 whose rest is one token);
		// zero: the figures are 0.
		exact, zero bool
	}{
		{name: "identical", fp32: []dist{peaked, flat, shifted}, export: []dist{peaked, flat, shifted}, k: 2, agreed: 3, zero: true},
		{name: "identical, every token kept", fp32: []dist{peaked}, export: []dist{peaked}, k: 5, agreed: 1, exact: true, zero: true},
		{name: "argmax moved", fp32: []dist{peaked, peaked}, export: []dist{peaked, shifted}, k: 2, agreed: 1},
		// flat's argmax is token 0 (ties go to the first), as peaked's is.
		{name: "every token kept: the full KL", fp32: []dist{peaked, shifted}, export: []dist{flat, flat}, k: 5, agreed: 1, exact: true},
		{name: "one token in the rest: the full KL", fp32: []dist{peaked, shifted}, export: []dist{flat, flat}, k: 4, agreed: 1, exact: true},
		{name: "only the tail differs: invisible in the rest bucket", fp32: []dist{peaked}, export: []dist{tailed}, k: 3, agreed: 1, zero: true},
		{name: "only the tail differs, kept", fp32: []dist{peaked}, export: []dist{tailed}, k: 5, agreed: 1, exact: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, got := sides(tc.fp32, tc.export, tc.k)
			f, err := gate.CompareFidelity(ref, got, 0)
			require.NoError(t, err)
			assert.Equal(t, len(tc.fp32), f.Positions)
			assert.Equal(t, tc.k, f.TopK)
			assert.Equal(t, tc.agreed, f.Agreed)
			assert.InDelta(t, float64(tc.agreed)/float64(len(tc.fp32)), f.NextTokenAgreement, 1e-12)
			var full, coarse, max float64
			for i := range tc.fp32 {
				kl := fullKL(tc.fp32[i], tc.export[i])
				full += kl / float64(len(tc.fp32))
				c := coarseKL(tc.fp32[i], tc.export[i], topK(tc.fp32[i], tc.k))
				coarse += c / float64(len(tc.fp32))
				max = math.Max(max, c)
			}
			assert.InDelta(t, coarse, f.MeanKL, 1e-12, "the coarse-grained KL")
			assert.InDelta(t, max, f.MaxKL, 1e-12)
			assert.GreaterOrEqual(t, f.MeanKL, 0.0)
			assert.LessOrEqual(t, f.MeanKL, full+1e-12, "a lower bound of the full KL")
			if tc.exact {
				assert.InDelta(t, full, f.MeanKL, 1e-12, "every bucket but one token each: the full KL")
			}
			if tc.zero {
				assert.Equal(t, 0.0, f.MeanKL)
				assert.Equal(t, 0.0, f.MaxKL)
			} else {
				assert.Positive(t, f.MeanKL)
			}
		})
	}
}

// TestBucketKL holds the formula to hand-computed cases.
func TestBucketKL(t *testing.T) {
	l := math.Log
	for _, tc := range []struct {
		name  string
		pLogP []float64
		pRest float64
		qLogP []float64
		qRest float64
		want  float64
	}{
		{"same", []float64{l(0.5), l(0.3)}, 0.2, []float64{l(0.5), l(0.3)}, 0.2, 0},
		{"two buckets", []float64{l(0.5)}, 0.5, []float64{l(0.25)}, 0.75, 0.5*l(2) + 0.5*l(0.5/0.75)},
		{"fp32 gives a bucket nothing", []float64{0, -1000}, 0, []float64{l(0.5), l(0.5)}, 0, l(2)},
		{"the export gives the rest nothing", []float64{l(0.9)}, 0.1, []float64{0}, 0, 0.9*l(0.9) + 0.1*(l(0.1)-l(1e-300))},
		{"rounding below zero is zero", []float64{l(0.5)}, 0.5, []float64{l(0.5) + 1e-15}, 0.5 - 1e-15, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gate.BucketKL(tc.pLogP, tc.pRest, tc.qLogP, tc.qRest)
			assert.InDelta(t, tc.want, got, 1e-12)
			assert.GreaterOrEqual(t, got, 0.0)
		})
	}
}

// TestCompareFidelityRefuses: numbers that are not distributions on the same buckets are
// errors, not figures.
func TestCompareFidelityRefuses(t *testing.T) {
	ref, got := sides([]dist{peaked, flat}, []dist{peaked, flat}, 2)
	for _, tc := range []struct {
		name string
		edit func(r *gate.FidelityReference, g *gate.FidelityMeasured)
		want string
	}{
		{"fewer positions measured", func(_ *gate.FidelityReference, g *gate.FidelityMeasured) { g.Positions = g.Positions[:1] },
			"the export was measured at 1 positions of the fidelity text, the reference has 2"},
		{"reference mass", func(r *gate.FidelityReference, _ *gate.FidelityMeasured) { r.Positions[1].Rest = 0.9 },
			"fidelity reference position 1: the buckets' probabilities sum to"},
		{"export mass", func(_ *gate.FidelityReference, g *gate.FidelityMeasured) { g.Positions[0].Rest = 0.5 },
			"fidelity position 0 of the export: the buckets' probabilities sum to"},
		{"a bucket short", func(_ *gate.FidelityReference, g *gate.FidelityMeasured) {
			g.Positions[1].LogP = g.Positions[1].LogP[:1]
		},
			"fidelity position 1: the export gives 1 log-probabilities for fp32's 2 tokens"},
		{"top k not kept", func(r *gate.FidelityReference, _ *gate.FidelityMeasured) { r.Positions[0].IDs = r.Positions[0].IDs[:1] },
			"fidelity reference position 0 keeps 1 tokens and 2 log-probabilities, not 2"},
		{"tokens and positions", func(r *gate.FidelityReference, _ *gate.FidelityMeasured) { r.Tokens = r.Tokens[:1] },
			"the fidelity reference has 2 positions for 1 tokens"},
		{"a positive log-probability", func(r *gate.FidelityReference, _ *gate.FidelityMeasured) { r.Positions[0].LogP[1] = 0.5 },
			"is not a log-probability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, g := sides([]dist{peaked, flat}, []dist{peaked, flat}, 2)
			tc.edit(&r, &g)
			_, err := gate.CompareFidelity(r, g, 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := gate.CompareFidelity(ref, got, 0)
	assert.NoError(t, err)
}

// TestScoreFidelity: Score adds the fidelity figures when both sides have them, says why
// when the reference has none, and refuses a measurement that lost them. Fidelity does not
// decide the verdict.
func TestScoreFidelity(t *testing.T) {
	r := rows(t)
	ref, got := figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 4}.build(t, r)

	res, err := gate.Score(r, ref, got)
	require.NoError(t, err)
	assert.Nil(t, res.Fidelity)
	assert.Equal(t, gate.NoFidelityReference, res.FidelityMissing)
	assert.Equal(t, "fidelity: not measured: "+gate.NoFidelityReference, res.FidelityLine())

	fr, fm := sides([]dist{peaked, flat, peaked, shifted}, []dist{peaked, flat, shifted, shifted}, 2)
	ref.Fidelity, got.Fidelity = &fr, &fm
	res, err = gate.Score(r, ref, got)
	require.NoError(t, err)
	assert.True(t, res.Passed, "a moved argmax on the fidelity text does not fail the gate")
	require.NotNil(t, res.Fidelity)
	assert.Empty(t, res.FidelityMissing)
	assert.Equal(t, 3, res.Fidelity.Agreed)
	assert.Equal(t, 0.75, res.Fidelity.NextTokenAgreement)
	assert.Contains(t, res.FidelityLine(), "fidelity: next token like fp32 at 3 of 4 positions of t.txt (75.0%), mean KL(fp32 || export) ")

	q := res.Quality()
	assert.True(t, q.Measured)
	assert.Empty(t, q.NotMeasured)
	assert.True(t, q.GatePassed)
	assert.Equal(t, 12, q.GateGraded)
	assert.Equal(t, 12, q.GateAgreed)
	assert.InDelta(t, 0.9, q.GateFP32Mean, 1e-12)
	assert.InDelta(t, 0.85, q.GateExportMean, 1e-12)
	assert.InDelta(t, 0.05, q.GateShortfall, 1e-12)
	assert.Equal(t, 4, q.QuietRows)
	assert.Equal(t, 4, q.QuietRowsAnsweredLikeFP32)
	assert.Equal(t, res.Fidelity, q.Fidelity)

	got.Fidelity = nil
	_, err = gate.Score(r, ref, got)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the fp32 reference has the fidelity text t.txt (sha256 cd) and the export's measurement has none")
}

// TestMaxMeanKL: with gate.max_mean_kl set, a file whose mean KL is above it fails with the
// figures, one at or below it passes, and a reference without the fidelity text cannot be
// graded; 0 never grades.
func TestMaxMeanKL(t *testing.T) {
	fr, fm := sides([]dist{peaked, flat, peaked, shifted}, []dist{peaked, flat, shifted, shifted}, 2)
	for _, tc := range []struct {
		name     string
		limit    float64
		noRef    bool
		passed   bool
		problems string
	}{
		{name: "not graded", limit: 0, passed: true},
		{name: "above", limit: 1e-6, problems: "above gate.max_mean_kl 1e-06 (next token agrees at 3 of 4 positions)"},
		{name: "below", limit: 100, passed: true},
		{name: "no reference", limit: 0.1, noRef: true, problems: "gate.max_mean_kl is 0.1 but the fp32 reference has no fidelity text to grade"},
		{name: "no reference, not graded", limit: 0, noRef: true, passed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rows(t)
			r.MaxMeanKL = tc.limit
			ref, got := figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 4}.build(t, r)
			if !tc.noRef {
				ref.Fidelity, got.Fidelity = &fr, &fm
			}
			res, err := gate.Score(r, ref, got)
			require.NoError(t, err)
			assert.Equal(t, tc.passed, res.Passed, "%v", res.Problems)
			if tc.problems == "" {
				assert.Empty(t, res.Problems)
				return
			}
			require.Len(t, res.Problems, 1)
			assert.Contains(t, res.Problems[0], tc.problems)
		})
	}
}

func TestNotMeasuredHere(t *testing.T) {
	q := gate.NotMeasuredHere("Vulkan (GPU)")
	assert.False(t, q.Measured)
	assert.Equal(t, "not measured here: Vulkan (GPU) needs a phone", q.NotMeasured)
	assert.Nil(t, q.Fidelity)
	assert.Nil(t, q.Simulated)
	assert.Empty(t, q.SimulatedLine())
}

// TestSimulatedQuality: a simulated figure sits beside "not measured here" in the quality
// block's JSON, never in the measured figures' place, and its line says it is simulated.
func TestSimulatedQuality(t *testing.T) {
	fid := gate.Fidelity{Text: gate.TextID{File: "fidelity-text.txt", SHA256: "ab"}, Positions: 2048, TopK: 32,
		Agreed: 1701, NextTokenAgreement: 1701.0 / 2048, MeanKL: 0.04213, MaxKL: 0.9}
	tests := []struct {
		name string
		q    gate.Quality
		line string
	}{
		{"a QNN file", gate.NotMeasuredHere("Qualcomm QNN (HTP)"),
			"simulated on the CPU (QDQ program, not the HTP): next token 83.1% of 2,048, mean KL 0.042; not measured here: Qualcomm QNN (HTP) needs a phone"},
		{"no reason given", gate.Quality{}, "simulated on the CPU (QDQ program, not the HTP): next token 83.1% of 2,048, mean KL 0.042"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Simulated = &gate.SimulatedFidelity{By: gate.QDQOnCPU, Fidelity: fid}
			assert.Equal(t, tc.line, q.SimulatedLine())
			b, err := json.Marshal(q)
			require.NoError(t, err)
			var back map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, "false", string(back["measured"]))
			assert.Equal(t, "null", string(back["fidelity"]), "the measured figures stay empty")
			assert.JSONEq(t, `{"by": "QDQ program on the CPU (simulated quantization), not the HTP",
				"text": {"file": "fidelity-text.txt", "sha256": "ab"}, "positions": 2048, "top_k": 32, "agreed": 1701,
				"next_token_agreement": 0.83056640625, "mean_kl": 0.04213, "max_kl": 0.9}`, string(back["simulated"]))
		})
	}
}

// TestLoadFidelityText: the embedded default is the Walden paragraph, its source lines are
// not part of the text, and a config folder is read by name.
func TestLoadFidelityText(t *testing.T) {
	c, err := config.Default()
	require.NoError(t, err)
	text, err := gate.LoadFidelityText("", c.Gate)
	require.NoError(t, err)
	assert.Equal(t, "fidelity-text.txt", text.ID.File)
	assert.Len(t, text.ID.SHA256, 64)
	assert.True(t, strings.HasPrefix(text.Text, "At a certain season of our life we are accustomed"), text.Text[:40])
	assert.Contains(t, text.Text, "I went to the woods because I wished to live deliberately")
	assert.NotContains(t, text.Text, "#")
	assert.Equal(t, 2048, text.Tokens)
	assert.Equal(t, 32, text.TopK)
	assert.Greater(t, len(strings.Fields(text.Text)), 2048, "enough words for 2,048 tokens in any tokenizer")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fidelity-text.txt"), []byte("# source\n\n"+text.Text+"\n"), 0o644))
	local, err := gate.LoadFidelityText(dir, c.Gate)
	require.NoError(t, err)
	assert.Equal(t, text.ID, local.ID, "the hash is the text's, not the file's header")

	_, err = gate.LoadFidelityText(t.TempDir(), c.Gate)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gate.fidelity_text names fidelity-text.txt, which is not in the config folder")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "fidelity-text.txt"), []byte("too short\n"), 0o644))
	_, err = gate.LoadFidelityText(dir, c.Gate)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has 2 words, too few for gate.fidelity_tokens 2048")
}

// TestDeepFidelity: the deep figures count only the positions from the deep start on (here
// the last two of four, where the export's one disagreement is), and gate.max_deep_mean_kl
// grades them for a file whose KV cache is int8, at its edge: a limit a hair under the deep
// mean KL fails it, the mean KL itself passes; an fp32-cache file is never graded by it, 0
// records without grading, and a reference shorter than the deep start cannot grade.
func TestDeepFidelity(t *testing.T) {
	fr, fm := sides([]dist{peaked, flat, peaked, shifted}, []dist{peaked, flat, shifted, shifted}, 2)
	whole, err := gate.CompareFidelity(fr, fm, 0)
	require.NoError(t, err)
	assert.Nil(t, whole.Deep)
	f, err := gate.CompareFidelity(fr, fm, 2)
	require.NoError(t, err)
	require.NotNil(t, f.Deep)
	d := *f.Deep
	assert.Equal(t, 2, d.From)
	assert.Equal(t, 2, d.Positions)
	assert.Equal(t, 1, d.Agreed)
	assert.InDelta(t, 0.5, d.NextTokenAgreement, 1e-12)
	assert.InDelta(t, 2*whole.MeanKL, d.MeanKL, 1e-12, "the one costly position is deep: twice the mean over half the positions")
	_, err = gate.CompareFidelity(fr, fm, 4)
	assert.ErrorContains(t, err, "past the fidelity text's 4 positions")

	for _, tc := range []struct {
		name     string
		kv       string
		limit    float64
		deepFrom int
		problems string
	}{
		{name: "int8 just outside", kv: "int8", limit: d.MeanKL * (1 - 1e-9), deepFrom: 2, problems: "the int8 KV cache drifts: mean KL against fp32 at the fidelity text's positions 2 to 3"},
		{name: "int8 at the bound", kv: "int8", limit: d.MeanKL, deepFrom: 2},
		{name: "fp32 cache not graded", kv: "fp32", limit: 1e-9, deepFrom: 2},
		{name: "int8 not graded", kv: "int8", limit: 0, deepFrom: 2},
		{name: "no deep positions", kv: "int8", limit: 0.1, deepFrom: 4, problems: "gate.max_deep_mean_kl is 0.1 but the fp32 reference has no deep positions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rows(t)
			r.DeepFrom, r.MaxDeepMeanKL = tc.deepFrom, tc.limit
			ref, got := figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 4}.build(t, r)
			ref.Fidelity, got.Fidelity, got.KVCache = &fr, &fm, tc.kv
			res, err := gate.Score(r, ref, got)
			require.NoError(t, err)
			if tc.problems == "" {
				assert.True(t, res.Passed, "%v", res.Problems)
				return
			}
			assert.False(t, res.Passed)
			require.Len(t, res.Problems, 1)
			assert.Contains(t, res.Problems[0], tc.problems)
		})
	}
}
