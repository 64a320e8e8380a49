package gate_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// TestGateBoundsAtTheEdge holds each threshold of the decision gate at its edge: the
// figures exactly at the bound pass (or, for Confident, are not graded) and the next step
// beyond it fails, so a bound loosened by a quarter, or a comparison that lets the bound
// itself through the other way, breaks a case here (docs/research/bounds.md).
func TestGateBoundsAtTheEdge(t *testing.T) {
	// twoUndecided leaves 10 of the 12 search rows graded (fp32 p at Confident is not
	// confident), so MinAgreement × graded is the whole number 9.
	twoUndecided := append([]float64{gate.Confident, gate.Confident}, fill(10, 0.9)...)
	// shortBy lowers one graded row of 12 so that the mean falls by extra.
	shortBy := func(base, extra float64) []float64 {
		out := fill(12, base)
		out[0] -= 12 * extra
		return out
	}
	tests := []struct {
		name    string
		f       figures
		graded  int
		problem string // "" passes
	}{
		{name: "shortfall at MaxShortfall", f: figures{fp32: fill(12, 0.75), export: fill(12, 0.75-gate.MaxShortfall), agree: agreeing(12, 12), quietAgree: 4},
			graded: 12},
		{name: "shortfall a thousandth over MaxShortfall", f: figures{fp32: fill(12, 0.75), export: shortBy(0.75-gate.MaxShortfall, 0.001), agree: agreeing(12, 12), quietAgree: 4},
			graded: 12, problem: "0.251 short; at most 0.25 is allowed"},
		{name: "agreement at MinAgreement (9 of 10)", f: figures{fp32: twoUndecided, export: fill(12, 0.85), agree: append([]bool{false, false}, agreeing(10, 9)...), quietAgree: 4},
			graded: 10},
		{name: "agreement one row under MinAgreement (8 of 10)", f: figures{fp32: twoUndecided, export: fill(12, 0.85), agree: append([]bool{false, false}, agreeing(10, 8)...), quietAgree: 4},
			graded: 10, problem: "the export's top token is fp32's on 8 of 10 graded rows; at least 90% must agree"},
		{name: "agreement 11 of 12", f: figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 11), quietAgree: 4},
			graded: 12},
		{name: "agreement 10 of 12", f: figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 10), quietAgree: 4},
			graded: 12, problem: "on 10 of 12 graded rows"},
		{name: "quiet rows: QuietMisses missed", f: figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 4 - gate.QuietMisses},
			graded: 12},
		{name: "quiet rows: one more missed", f: figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 3 - gate.QuietMisses},
			graded: 12, problem: "the export answers 2 of 4 quiet rows like fp32; at least 3 must"},
		{name: "fp32 p at Confident is not graded", f: figures{fp32: fill(12, gate.Confident), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 4},
			graded: 0, problem: "fp32 is confident (p > 0.5) on no search row"},
		{name: "fp32 p just above Confident is graded", f: figures{fp32: fill(12, math.Nextafter(gate.Confident, 1)), export: fill(12, 0.45), agree: agreeing(12, 12), quietAgree: 4},
			graded: 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rows(t)
			r.MaxMeanKL = 0
			ref, got := tc.f.build(t, r)
			res, err := gate.Score(r, ref, got)
			require.NoError(t, err)
			assert.Equal(t, tc.graded, res.Graded)
			if tc.problem == "" {
				assert.True(t, res.Passed, "%v", res.Problems)
				assert.Empty(t, res.Problems)
				return
			}
			assert.False(t, res.Passed)
			require.Len(t, res.Problems, 1, "only the bound under test fails")
			assert.Contains(t, res.Problems[0], tc.problem)
		})
	}
}

// TestMaxMeanKLAtTheEdge: a file whose mean KL equals gate.max_mean_kl passes, and the
// next float below the figure as the limit fails it.
func TestMaxMeanKLAtTheEdge(t *testing.T) {
	fr, fm := sides([]dist{peaked, flat, peaked, shifted}, []dist{peaked, flat, shifted, shifted}, 2)
	score := func(limit float64) gate.Result {
		r := rows(t)
		r.MaxMeanKL = limit
		ref, got := figures{fp32: fill(12, 0.9), export: fill(12, 0.85), agree: agreeing(12, 12), quietAgree: 4}.build(t, r)
		ref.Fidelity, got.Fidelity = &fr, &fm
		res, err := gate.Score(r, ref, got)
		require.NoError(t, err)
		return res
	}
	measured := score(0)
	require.NotNil(t, measured.Fidelity)
	kl := measured.Fidelity.MeanKL
	require.Greater(t, kl, 0.0, "the precondition: the two sides differ")

	at := score(kl)
	assert.True(t, at.Passed, "mean KL equal to the limit passes: %v", at.Problems)
	for _, limit := range []float64{math.Nextafter(kl, 0), kl / 1.25} {
		over := score(limit)
		assert.False(t, over.Passed, "limit %g under the mean KL %g", limit, kl)
		if assert.Len(t, over.Problems, 1) {
			assert.Contains(t, over.Problems[0], "above gate.max_mean_kl")
		}
	}
}
