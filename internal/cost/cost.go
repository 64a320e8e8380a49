// Package cost turns measured export times into the runner minutes and the price of the
// export jobs a plan or a watcher run would start, before anything is dispatched
// (docs/research/costs.md). Per backend it fits
//
//	seconds = per-billion-parameter seconds at 2k × (params / 1e9) × (window / 2048)^growth
//
// from config's export_times and the export reports that add to them; a backend whose
// figures are flat takes the same time whatever the model and the window.
package cost

import (
	"math"
	"sort"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// refWindow is the window the fitted base time is given at.
const refWindow = 2048

// Fit is one backend's time model.
type Fit struct {
	Backend string `json:"backend"`
	// Flat is a time that holds for any model and window: FlatSeconds.
	Flat        bool    `json:"flat"`
	FlatSeconds float64 `json:"flat_seconds,omitempty"`
	// SecondsPerGParam is the export time at 2k per billion parameters; Growth the exponent
	// of the window's share (0 when no model was measured at two windows).
	SecondsPerGParam float64 `json:"seconds_per_billion_params_at_2k,omitempty"`
	Growth           float64 `json:"window_growth"`
	// Points is how many measurements the fit rests on.
	Points int `json:"points"`
}

// Seconds is the fitted export time of a model of params parameters at window.
func (f Fit) Seconds(params int64, window int) float64 {
	if f.Flat {
		return f.FlatSeconds
	}
	return f.SecondsPerGParam * float64(params) / 1e9 * math.Pow(float64(window)/refWindow, f.Growth)
}

// FitAll fits every backend that has measurements.
func FitAll(times []config.ExportTime) map[string]Fit {
	by := map[string][]config.ExportTime{}
	for _, t := range times {
		by[t.Backend] = append(by[t.Backend], t)
	}
	out := map[string]Fit{}
	for b, ts := range by {
		out[b] = fit(b, ts)
	}
	return out
}

// fit is one backend's model: flat figures give their geometric mean; otherwise the growth
// is the mean log-slope over the pairs of one model at two windows, and the base the
// geometric mean of the times brought to 1e9 parameters at 2k.
func fit(backend string, ts []config.ExportTime) Fit {
	var flat, sized []config.ExportTime
	for _, t := range ts {
		if t.Flat {
			flat = append(flat, t)
		} else {
			sized = append(sized, t)
		}
	}
	if len(sized) == 0 {
		logs := 0.0
		for _, t := range flat {
			logs += math.Log(t.Seconds)
		}
		return Fit{Backend: backend, Flat: true, FlatSeconds: math.Exp(logs / float64(len(flat))), Points: len(flat)}
	}
	growth := growthOf(sized)
	logs := 0.0
	for _, t := range sized {
		logs += math.Log(t.Seconds / (float64(t.Params) / 1e9) / math.Pow(float64(t.Window)/refWindow, growth))
	}
	return Fit{Backend: backend, SecondsPerGParam: math.Exp(logs / float64(len(sized))), Growth: growth, Points: len(sized)}
}

// growthOf is the mean of log(s2/s1)/log(w2/w1) over the pairs of one model at two
// windows, each window's time the geometric mean of its measurements; 0 without a pair.
func growthOf(ts []config.ExportTime) float64 {
	type key struct {
		model  string
		params int64
	}
	perModel := map[key]map[int][]float64{}
	for _, t := range ts {
		k := key{t.Model, t.Params}
		if perModel[k] == nil {
			perModel[k] = map[int][]float64{}
		}
		perModel[k][t.Window] = append(perModel[k][t.Window], math.Log(t.Seconds))
	}
	sum, n := 0.0, 0
	for _, ws := range perModel {
		windows := make([]int, 0, len(ws))
		for w := range ws {
			windows = append(windows, w)
		}
		sort.Ints(windows)
		for i := 1; i < len(windows); i++ {
			a, b := mean(ws[windows[i-1]]), mean(ws[windows[i]])
			sum += (b - a) / math.Log(float64(windows[i])/float64(windows[i-1]))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Job is one export job's cost: its minutes on the runner (rounded up, as runners bill
// whole minutes) and their price.
type Job struct {
	Minutes int     `json:"minutes"`
	USD     float64 `json:"usd"`
}

// Estimate is an export job of a model at window on runner, from the backend's fit; ok is
// false when the backend has no measurement or the runner no price.
func Estimate(fits map[string]Fit, backend string, params int64, window int, runner *config.Runner) (Job, bool) {
	f, ok := fits[backend]
	if !ok || runner == nil {
		return Job{}, false
	}
	return EstimateSeconds(f.Seconds(params, window), runner), true
}
