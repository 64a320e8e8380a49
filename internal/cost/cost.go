// Package cost turns measured export times into the runner minutes and the price of the
// export jobs a plan or a watcher run would start, before anything is dispatched
// (docs/research/costs.md). Per backend (and per route, where a backend has two tools) it
// fits
//
//	seconds = (fixed + seconds per billion parameters × params / 1e9) × (window / 2048)^growth
//
// from config's export_times, each brought to the runner by its host_scale, and the export
// reports that add to them; a backend whose figures are flat takes the same time whatever
// the model and the window.
package cost

import "github.com/experimentalmachines/exe-expo/internal/config"

// Job is one export job's cost: its minutes on the runner (rounded up, as runners bill
// whole minutes) and their price.
type Job struct {
	Minutes int     `json:"minutes"`
	USD     float64 `json:"usd"`
}

// Estimate is an export job of a model at window on runner, from the backend's fit (its
// route's where one is measured); ok is false when neither has a measurement or the
// runner no price.
func Estimate(fits map[string]Fit, backend, route string, params int64, window int, runner *config.Runner) (Job, bool) {
	f, ok := For(fits, backend, route)
	if !ok || runner == nil {
		return Job{}, false
	}
	return EstimateSeconds(f.Seconds(params, window), runner), true
}
