package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// TestSplitPredictions holds the embedded time model to the runner minutes
// docs/research/qnn-calibration.md predicts (its predict.py, from the probe's unrounded
// fits, minutes rounded up) within 1.5%: Qwen3-0.6B (SeqMSE, 50 candidates) and Qwen3-1.7B (none),
// calibrated at each window's own length and at 2k in the same job; and the workflow's
// calibrate-once jobs, which leave each window one forward pass of its own graph.
func TestSplitPredictions(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	ct, ok := cfg.CalibrationTimes["qnn"]
	require.True(t, ok, "pipeline.yaml has calibration_times.qnn")
	s := Split{Fit: FitAll(cfg.ExportTimes)["qnn"], Time: ct}
	const q06, q17 = 751632384, 2031739904
	windows := []int{2048, 4096, 8192, 16384, 32768}
	for _, tc := range []struct {
		name       string
		params     int64
		candidates int
		own, at2k  []int // the document's minutes
	}{
		{"Qwen3-0.6B", q06, 50, []int{50, 122, 400, 1480, 5706}, []int{50, 54, 62, 90, 218}},
		{"Qwen3-1.7B", q17, 0, []int{70, 80, 101, 179, 523}, []int{70, 81, 102, 180, 524}},
	} {
		for i, w := range windows {
			own := s.Seconds(tc.params, w, Calibrated{Candidates: tc.candidates}) / 60
			at := s.Seconds(tc.params, w, Calibrated{Candidates: tc.candidates, At: 2048}) / 60
			assert.InEpsilon(t, tc.own[i], own, 0.015, "%s %d own-window", tc.name, w)
			assert.InEpsilon(t, tc.at2k[i], at, 0.015, "%s %d calibrated at 2k", tc.name, w)
			once := s.Seconds(tc.params, w, Calibrated{Candidates: tc.candidates, At: 2048, Once: true}) / 60
			// the calibrate job took the 2k calibration away from every window's job
			calib := s.CalibrateSeconds(tc.params, Calibrated{Candidates: tc.candidates, At: 2048}) / 60
			forward, perCandidate, _ := s.parts(tc.params)
			if w > 2048 {
				assert.InDelta(t, at-once, (forward+float64(tc.candidates)*perCandidate)/60, 1e-9, "%s %d", tc.name, w)
			}
			assert.Less(t, calib, float64(tc.own[0]), "%s: the calibrate job compiles nothing", tc.name)
		}
	}
	// at 2k the measured recipe is the fit: the split changes nothing there
	assert.InDelta(t, s.Fit.Seconds(q06, 2048), s.Seconds(q06, 2048, Calibrated{Candidates: 50}), 1e-6)
}

// TestSplitCases: a window at or below the calibration window calibrates at its own length,
// and the split's parts add up to the fit at 2k.
func TestSplitCases(t *testing.T) {
	s := Split{Fit: Fit{SecondsPerGParam: 1000, Growth: 1}, Time: config.CalibrationTime{
		Share: 0.5, RefCandidates: 10, PassesPerCandidate: 0.9, Growth: 2, ForwardGrowth: 2, RestGrowth: 0, CompileShare: 0.8}}
	forward, perCandidate, rest := s.parts(1e9)
	assert.InDelta(t, 1000, forward+10*perCandidate+rest, 1e-9)
	assert.InDelta(t, 50, forward, 1e-9, "500 s of calibration is 1 + 10 × 0.9 forward passes")
	assert.InDelta(t, 4*500+500, s.Seconds(1e9, 4096, Calibrated{Candidates: 10}), 1e-9)
	assert.InDelta(t, 4*500+500, s.Seconds(1e9, 4096, Calibrated{Candidates: 10, At: 4096}), 1e-9, "not below the window: its own")
	assert.InDelta(t, 500+4*50+500, s.Seconds(1e9, 4096, Calibrated{Candidates: 10, At: 2048}), 1e-9)
	assert.InDelta(t, 4*50+500, s.Seconds(1e9, 4096, Calibrated{Candidates: 10, At: 2048, Once: true}), 1e-9)
	assert.InDelta(t, 4*50+500, s.Seconds(1e9, 4096, Calibrated{}), 1e-9, "no search: forward passes alone")
	assert.InDelta(t, 500+0.2*500, s.CalibrateSeconds(1e9, Calibrated{Candidates: 10, At: 2048}), 1e-9, "the calibration and the rest's fifth that is not the compile")
}
