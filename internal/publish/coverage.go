package publish

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// VariantCoverage is how much of a file runs inside its backend's delegate, summed over
// its code methods, as the structural check read it from the .pte
// (docs/research/pte.md): the linears inside (null when the delegate's payload cannot be
// read, QNN and NeuroPilot) and on CPU kernels, and the shares of operators and weight
// bytes inside.
type VariantCoverage struct {
	LinearsInside       *int     `json:"linears_inside"`
	LinearsOutside      int      `json:"linears_outside"`
	OperatorShareInside *float64 `json:"operator_share_inside"`
	WeightShareInside   *float64 `json:"weight_share_inside"`
}

// coverageOf sums the i-th program's coverage over its methods; nil when the report's check
// did not record one (an export before coverage was read).
func coverageOf(r *report.Report, i int) *VariantCoverage {
	if i >= len(r.StructuralCheck) || len(r.StructuralCheck[i].Coverage) == 0 {
		return nil
	}
	return sumCoverage(r.StructuralCheck[i].Coverage)
}

func sumCoverage(cs []pte.Coverage) *VariantCoverage {
	v := &VariantCoverage{}
	inside, known := 0, true
	opsIn, ops := 0, 0
	var wIn, w int64
	for _, c := range cs {
		v.LinearsOutside += c.LinearsOutside
		if c.LinearsInside == nil || c.OperatorsInside == nil {
			known = false
		} else {
			inside += *c.LinearsInside
			opsIn += *c.OperatorsInside
		}
		ops += c.OperatorsOutside
		wIn += c.WeightBytesInside
		w += c.WeightBytes()
	}
	if known {
		v.LinearsInside = &inside
		if total := ops + opsIn; total > 0 {
			share := float64(opsIn) / float64(total)
			v.OperatorShareInside = &share
		}
	}
	if w > 0 {
		share := float64(wIn) / float64(w)
		v.WeightShareInside = &share
	}
	return v
}

// coverageCell is the card's delegate column for the i-th program of r.
func coverageCell(r *report.Report, i int) string {
	v := coverageOf(r, i)
	if v == nil {
		return "not read"
	}
	var parts []string
	switch {
	case v.LinearsInside != nil:
		parts = append(parts, fmt.Sprintf("%d of %d linears", *v.LinearsInside, *v.LinearsInside+v.LinearsOutside))
	case v.LinearsOutside == 0:
		parts = append(parts, "no linear on the CPU")
	default:
		parts = append(parts, fmt.Sprintf("%d linears on the CPU", v.LinearsOutside))
	}
	if v.WeightShareInside != nil {
		parts = append(parts, fmt.Sprintf("%.0f%% of weights", 100**v.WeightShareInside))
	}
	return strings.Join(parts, ", ")
}

// coverageNote explains the delegate column under the files table.
const coverageNote = "In the delegate: the linears of the file that run inside its backend's delegate (read from the `.pte`; the QNN and NeuroPilot payloads do not say, so those count the linears left on CPU kernels instead) and the share of its weight bytes only the delegate reads; the embedding table and RoPE tables stay on the CPU by design. A file with a linear outside the delegate is refused."

// hasCoverage reports whether any report's check recorded delegate coverage: the card
// shows the column only then (reports of exports before it was read have none).
func hasCoverage(rs []placed) bool {
	for _, p := range rs {
		for _, c := range p.Report.StructuralCheck {
			if len(c.Coverage) > 0 {
				return true
			}
		}
	}
	return false
}
