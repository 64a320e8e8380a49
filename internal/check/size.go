package check

import (
	"fmt"
	"math"
	"strings"
)

// SizeResult is the size check's verdict as the export report records it: the files'
// bytes against the sizing estimate, held to the backend's measured error. It is how
// linears left unquantized show up (ExecuTorch issue 22044: 8da4w skips a linear whose
// width the group size does not divide, and the model ships nearly unquantized) when
// every structural fact of the program is still right.
type SizeResult struct {
	Kind     string   `json:"kind"`
	Backend  string   `json:"backend"`
	Passed   bool     `json:"passed"`
	Problems []string `json:"problems"`
	// ActualBytes are the exported files' bytes, EstimateBytes the sizing estimate for them.
	ActualBytes   int64 `json:"actual_bytes"`
	EstimateBytes int64 `json:"estimate_bytes"`
	// Error is actual / estimate − 1; MaxError the backend's measured error it is held to.
	Error    float64 `json:"error"`
	MaxError float64 `json:"max_error"`
}

// Size checks the exported files' bytes against the estimate. A backend without a
// measured error (spec.SizeError zero) or an export without an estimate cannot be checked,
// and fails: publishing a file nobody sized is what the check exists to stop.
func Size(spec Spec, actual, estimate int64) SizeResult {
	r := SizeResult{Kind: "size", Backend: spec.Backend, Problems: []string{},
		ActualBytes: actual, EstimateBytes: estimate, MaxError: spec.SizeError}
	switch {
	case spec.SizeError <= 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s has no measured size error to hold its files to", spec.Backend))
	case estimate <= 0:
		r.Problems = append(r.Problems, "the report has no size estimate to check the files against")
	case actual <= 0:
		r.Problems = append(r.Problems, "the report lists no exported bytes to check")
	default:
		r.Error = float64(actual)/float64(estimate) - 1
		// The bound is held in bytes, the deviation against the tolerance's share of the
		// estimate: actual/estimate − 1 rounds, and put a file exactly at "within 2%"
		// outside it (1,020,000 bytes on 1,000,000 is +0.020000000000000018).
		if off := math.Abs(float64(actual - estimate)); off > spec.SizeError*float64(estimate) {
			r.Problems = append(r.Problems, fmt.Sprintf(
				"the files are %d bytes, %+.1f%% off the sizing estimate of %d bytes; %s files are within %.0f%% of it when built as sized (linears left unquantized make an 8da4w file larger)",
				actual, 100*r.Error, estimate, spec.Backend, 100*spec.SizeError))
		}
	}
	r.Passed = len(r.Problems) == 0
	return r
}

// Verdict is the one-line summary a step summary prints.
func (r SizeResult) Verdict() string {
	if r.Passed {
		return fmt.Sprintf("size check (%s): passed, %d bytes, %+.1f%% off the estimate of %d", r.Backend, r.ActualBytes, 100*r.Error, r.EstimateBytes)
	}
	return fmt.Sprintf("size check (%s): failed: %s", r.Backend, strings.Join(r.Problems, "; "))
}
