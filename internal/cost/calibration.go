package cost

import (
	"math"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// Calibrated is how a window's export job gets its quantization encodings, which decides
// how its time grows with the window (config.CalibrationTime).
type Calibrated struct {
	// Candidates is the decoder recipe's SeqMSE candidates (0: no search).
	Candidates int
	// At is the window the calibration runs at (export.qnn.calib_window); 0, or a window at
	// or above the job's, calibrates at the job's own window.
	At int
	// Once says the workflow's calibrate job calibrated at At and the window's job loads
	// its encodings: the job runs one forward pass of its own graph and no calibration.
	Once bool
}

// Split is a fitted export time with its calibration split out: the fit gives the export
// at 2k, Time the share and the growth of each part.
type Split struct {
	Fit  Fit
	Time config.CalibrationTime
}

// parts are a model's export at 2k on the measured recipe, split: one forward pass, one
// SeqMSE candidate's search, and the rest.
func (s Split) parts(params int64) (forward, perCandidate, rest float64) {
	t2 := s.Fit.Seconds(params, refWindow)
	calib := s.Time.Share * t2
	forward = calib / (1 + float64(s.Time.RefCandidates)*s.Time.PassesPerCandidate)
	return forward, forward * s.Time.PassesPerCandidate, t2 - calib
}

// Seconds is a window's export job: its calibration as c says, one forward pass of the
// window's own graph where the encodings come from a shorter one, and the rest.
func (s Split) Seconds(params int64, window int, c Calibrated) float64 {
	forward, perCandidate, rest := s.parts(params)
	x := float64(window) / refWindow
	own := forward * math.Pow(x, s.Time.ForwardGrowth) // one pass of the window's graph
	var calib float64
	switch {
	case c.Once:
		calib = own
	case c.At > 0 && c.At < window:
		calib = s.calibration(forward, perCandidate, c.Candidates, c.At) + own
	default:
		calib = s.calibration(forward, perCandidate, c.Candidates, window)
	}
	return calib + rest*math.Pow(x, s.Time.RestGrowth)
}

// CalibrateSeconds is the workflow's calibrate job: the calibration at c.At and the rest
// but its compile (loading, exporting, converting), as an export at c.At runs them.
func (s Split) CalibrateSeconds(params int64, c Calibrated) float64 {
	forward, perCandidate, rest := s.parts(params)
	x := float64(c.At) / refWindow
	return s.calibration(forward, perCandidate, c.Candidates, c.At) + rest*(1-s.Time.CompileShare)*math.Pow(x, s.Time.RestGrowth)
}

// calibration is the calibration loop at window: with a search, as the runner measured it
// grow; without, forward passes alone.
func (s Split) calibration(forward, perCandidate float64, candidates, window int) float64 {
	x := float64(window) / refWindow
	if candidates == 0 {
		return forward * math.Pow(x, s.Time.ForwardGrowth)
	}
	return (forward + float64(candidates)*perCandidate) * math.Pow(x, s.Time.Growth)
}

// EstimateSeconds is a predicted time as a job: whole minutes, rounded up, and their price.
func EstimateSeconds(seconds float64, runner *config.Runner) Job {
	// The fit's geometric means go through exp(log(x)), which can land a hair above the
	// measured figure (15000 s as 15000.000000000002): rounded to the millisecond first, a
	// job measured at whole minutes is billed those minutes, not one more, and a window
	// measured at exactly the job limit is not skipped for a rounding error.
	secs := math.Round(seconds*1000) / 1000
	m := int(math.Ceil(secs / 60))
	return Job{Minutes: m, USD: math.Round(float64(m)*runner.USDPerMinute*100) / 100}
}
