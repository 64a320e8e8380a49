package gate_test

import (
	"math"

	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// dist is a full distribution over a small vocabulary.
type dist []float64

// bucket coarse-grains p to the buckets of ref (its top k, most probable first) and the rest.
func bucket(p dist, ids []int) (logp []float64, rest float64) {
	rest = 1
	for _, id := range ids {
		logp = append(logp, math.Log(p[id]))
		rest -= p[id]
	}
	return logp, math.Max(rest, 0)
}

// topK is p's k most probable tokens, most probable first.
func topK(p dist, k int) []int {
	ids := make([]int, len(p))
	for i := range ids {
		ids[i] = i
	}
	for i := 0; i < k; i++ {
		for j := i + 1; j < len(ids); j++ {
			if p[ids[j]] > p[ids[i]] {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	return ids[:k]
}

func argmaxOf(p dist) int { return topK(p, 1)[0] }

// sides builds both sides of the fidelity measure from full distributions per position.
func sides(fp32, export []dist, k int) (gate.FidelityReference, gate.FidelityMeasured) {
	ref := gate.FidelityReference{Text: gate.TextID{File: "t.txt", SHA256: "cd"}, TopK: k}
	var got gate.FidelityMeasured
	for i := range fp32 {
		ids := topK(fp32[i], k)
		lp, rest := bucket(fp32[i], ids)
		ref.Tokens = append(ref.Tokens, i)
		ref.Positions = append(ref.Positions, gate.RefPosition{IDs: ids, LogP: lp, Rest: rest})
		elp, erest := bucket(export[i], ids)
		got.Positions = append(got.Positions, gate.MeasuredPosition{Token: argmaxOf(export[i]), LogP: elp, Rest: erest})
	}
	return ref, got
}

func fullKL(p, q dist) float64 {
	var kl float64
	for i := range p {
		if p[i] > 0 {
			kl += p[i] * math.Log(p[i]/q[i])
		}
	}
	return kl
}

// coarseKL is KL over the buckets ids and the rest, from the probabilities.
func coarseKL(p, q dist, ids []int) float64 {
	prest, qrest, kl := 1.0, 1.0, 0.0
	for _, id := range ids {
		kl += p[id] * math.Log(p[id]/q[id])
		prest, qrest = prest-p[id], qrest-q[id]
	}
	if prest > 1e-12 {
		kl += prest * math.Log(prest/qrest)
	}
	return kl
}

var (
	peaked  = dist{0.7, 0.1, 0.1, 0.05, 0.05}
	flat    = dist{0.2, 0.2, 0.2, 0.2, 0.2}
	shifted = dist{0.1, 0.6, 0.1, 0.1, 0.1}
	tailed  = dist{0.7, 0.1, 0.1, 0.09, 0.01}
)
