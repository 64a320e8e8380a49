package plan

import (
	"errors"
	"fmt"
	"math"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/cost"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// SizingModel is what sizing needs of a loaded source: its architecture, its RoPE layout
// (from the family's export_llm plan), its parameter count and its family, fam, which the
// verdict decided (family.Verdict.Fam) and the size models read from the Model.
func SizingModel(src *model.Source, fam *family.Family) (sizing.Model, error) {
	if src.Config == nil {
		return sizing.Model{}, errors.New("no config.json loaded")
	}
	if fam == nil {
		return sizing.Model{}, fmt.Errorf("architecture %v has no family", src.Config.Architectures())
	}
	a, err := src.Config.Arch()
	if err != nil {
		return sizing.Model{}, err
	}
	if src.Params == nil {
		return sizing.Model{}, fmt.Errorf("%s: no parameter count, so it cannot be sized", src.ID)
	}
	hf, oneWindow := fam.Key != "llama", false
	if lp, err := family.XNNPACKPlan(fam, src.Config); err == nil {
		_, doubled := lp.Params["ffn_dim_multiplier"]
		hf, oneWindow = lp.HFRope, !doubled
	}
	return sizing.Model{Arch: a, HFRope: hf, RopeOneWindow: oneWindow, Params: src.Params.Total, Family: fam}, nil
}

// Estimate is one window of one backend as the backend's size model sees it: the KV cache,
// the files, what the phone holds, and what the export needs of a host (memory, and disk
// without any margin a runner check adds). qmode overrides the XNNPACK/Vulkan recipe's.
// plan prints it per window; export's gate checks the host against it.
func Estimate(cfg *config.Config, src *model.Source, m sizing.Model, b *backend.Backend, qmode string, w int) (Row, error) {
	e := cfg.Export
	row := Row{Window: w, Label: family.WindowLabel(w)}
	if b.Estimate == nil {
		return row, fmt.Errorf("%s has no size model: %s", b.Name, b.Unavailable)
	}
	z, err := b.Estimate(cfg, src, m, qmode, w)
	row.KVCache, row.KVBytesPerToken, row.KVCacheBytes, row.PTEBytes = z.KVCache, z.KVBytesPerToken, z.KVCacheBytes, z.PTEBytes
	row.StateBytes, row.Chunks, row.EmbeddingBytes = z.StateBytes, z.Chunks, z.EmbeddingBytes
	row.HostNeedBytes, row.DiskNeedBytes, row.ExportPeakBytes = z.HostNeedBytes, z.DiskNeedBytes, z.ExportPeakBytes
	row.ResidentBytes = sizing.AddBytes(row.PTEBytes, row.KVCacheBytes, row.StateBytes, e.RuntimeOverheadBytes)
	if len(z.KVCaches) > 1 {
		row.ResidentByCache = map[string]int64{}
		for _, c := range z.KVCaches {
			row.ResidentByCache[c] = sizing.AddBytes(row.PTEBytes, m.KVCacheBytesAs(c, w), row.StateBytes, e.RuntimeOverheadBytes)
		}
	}
	row.FitsPhone = row.ResidentBytes <= e.DeviceBudgetBytes
	return row, err
}

func fillBackend(cfg *config.Config, src *model.Source, m sizing.Model, b *backend.Backend, bp *BackendPlan) {
	d, err := b.Describe(cfg, src, m.Family)
	if err != nil {
		bp.OK, bp.Reason = false, err.Error()
		return
	}
	bp.Recipe, bp.Targets = d.Recipe, d.Targets
	tiers := cfg.RunnersFor(d.Runners)
	jobs := newJobTimer(cfg, src, b, m)
	for _, w := range b.Windows(cfg) {
		row, err := Estimate(cfg, src, m, b, "", w)
		if err != nil {
			row.Skip = err.Error()
		} else if r := pick(&row, tiers, d.Fit); r != nil && !bp.SizedAhead {
			jobs.time(&row, r)
		}
		bp.Rows = append(bp.Rows, row)
	}
	if !bp.SizedAhead {
		bp.Calibrate = jobs.calibrateJob(bp.Rows)
	}
	bp.tally(cfg)
	if fallbackApplies(b, d) {
		for _, w := range b.Windows(cfg) {
			row, err := Estimate(cfg, src, m, b, "fp32", w)
			if err != nil {
				row.Skip = err.Error()
			} else if r := pick(&row, tiers, d.Fit); r != nil && !bp.SizedAhead {
				jobs.time(&row, r)
			}
			bp.Fallback = append(bp.Fallback, row)
		}
	}
}

// tally sums what the backend's built windows give: the phone table and the export cost.
// It runs again when the repo's layout leaves a window out.
func (bp *BackendPlan) tally(cfg *config.Config) {
	bp.Phones = phoneTable(cfg, bp.Rows)
	bp.PhonesByCache = cacheTables(cfg, bp.Rows)
	if bp.SizedAhead {
		return // nothing is dispatched, so nothing costs
	}
	bp.Jobs, bp.Minutes, bp.USD = runCost(bp.Rows, len(bp.Targets))
	if c := bp.Calibrate; c != nil && bp.Jobs > 0 {
		chips := max(len(bp.Targets), 1)
		bp.Jobs, bp.Minutes = bp.Jobs+chips, bp.Minutes+chips*c.Minutes
		bp.USD = math.Round((bp.USD+float64(chips)*c.USD)*100) / 100
	}
}

// jobTimer prices one backend's export jobs from its fitted export times and holds each
// against the job limit (export.job_limit_minutes), the generated workflows' timeout.
type jobTimer struct {
	// fit is the backend's time model for the family's route; fitted false without one.
	fit    cost.Fit
	fitted bool
	params int64
	limit  int
	// split, when set, predicts from the fit with the calibration split out
	// (calibration_times), as calib says the recipe calibrates; runners are the rows'.
	split   *cost.Split
	calib   cost.Calibrated
	runners map[int]*config.Runner
}

// newJobTimer is b's job timer for model m of src: priced on its route's fitted time where
// one is measured, split where pipeline.yaml splits b's measured (not flat) time and b
// says how src is calibrated.
func newJobTimer(cfg *config.Config, src *model.Source, b *backend.Backend, m sizing.Model) jobTimer {
	j := jobTimer{params: m.Params, limit: cfg.Export.JobLimitMinutes, runners: map[int]*config.Runner{}}
	j.fit, j.fitted = cost.For(cost.FitAll(cfg.ExportTimes), b.Name, routeOf(m, b))
	ct, split := cfg.CalibrationTimes[b.Name]
	if j.fitted && !j.fit.Flat && split && b.Calibration != nil {
		j.split, j.calib = &cost.Split{Fit: j.fit, Time: ct}, b.Calibration.Model(cfg, src)
	}
	return j
}

// routeOf is the tool that builds m's files on an LLM backend (family.Route), whose
// export time may be fitted apart; "" elsewhere.
func routeOf(m sizing.Model, b *backend.Backend) string {
	if !b.LLM || m.Family == nil {
		return ""
	}
	return m.Family.Route.Tool
}

// time sets the row's export job on runner r (its minutes and price) and skips the window
// when that job would outlast the job limit: dispatched, it would hold the runner until
// the timeout cancels it and fail, where a window the runner cannot build is a skip. A
// backend without a measured time is neither priced nor skipped: nothing predicts it.
func (j jobTimer) time(row *Row, r *config.Runner) {
	var job cost.Job
	if j.split != nil {
		job = cost.EstimateSeconds(j.split.Seconds(j.params, row.Window, j.calib), r)
	} else if j.fitted {
		job = cost.EstimateSeconds(j.fit.Seconds(j.params, row.Window), r)
	} else {
		return
	}
	j.runners[row.Window] = r
	row.ExportMinutes, row.ExportUSD = job.Minutes, job.USD
	if job.Minutes > j.limit {
		row.Skip = overJobLimit(job.Minutes, r.Label, j.limit, j.split != nil)
	}
}

// calibrateJob is the workflow's calibrate job, one per chip, where the recipe calibrates
// once (cost.Calibrated.Once): at the calibration window, on the runner plan picked for
// that window (the smallest window's when none is that long), priced as an export there,
// which it is at most. Nil where the windows' jobs calibrate themselves or none is priced.
func (j jobTimer) calibrateJob(rows []Row) *CalibrateJob {
	if j.split == nil || !j.calib.Once {
		return nil
	}
	var on *Row
	for i, row := range rows {
		if j.runners[row.Window] != nil && (on == nil || row.Window == j.calib.At) {
			on = &rows[i]
		}
	}
	if on == nil {
		return nil
	}
	job := cost.EstimateSeconds(j.split.CalibrateSeconds(j.params, j.calib), j.runners[on.Window])
	return &CalibrateJob{Window: j.calib.At, Runner: on.Runner, SwapGiB: on.SwapGiB, Minutes: job.Minutes, USD: job.USD}
}

// OverJobLimit is the reason a window is skipped for time: the prediction, the runner it
// is for, and the limit, each with the pipeline.yaml key that sets it.
func OverJobLimit(minutes int, runner string, limit int) string {
	return overJobLimit(minutes, runner, limit, false)
}

// OverJobLimitSplit is OverJobLimit for a prediction with the calibration split out
// (calibration_times).
func OverJobLimitSplit(minutes int, runner string, limit int) string {
	return overJobLimit(minutes, runner, limit, true)
}

func overJobLimit(minutes int, runner string, limit int, split bool) string {
	from := "fitted from pipeline.yaml's export_times"
	if split {
		from += ", the calibration split by its calibration_times"
	}
	return fmt.Sprintf("the export would take about %s minutes on %s (%s), over the %d-minute job limit (export.job_limit_minutes)",
		family.Commas(int64(minutes)), runner, from, limit)
}

// fallbackApplies says whether a window of b can fall back to the fp32 recipe: b's files are
// graded by the decision gate (its x86 runner runs them) and its recipe quantizes.
func fallbackApplies(b *backend.Backend, d backend.Description) bool {
	return b.LLM && b.Smoke && d.QMode != "" && d.QMode != "fp32"
}

// runCost is what building every window costs: one job per window built (per chip for a
// backend with chips), their runner minutes and price. A skipped window, for memory or
// for time, is never dispatched, so it costs nothing.
func runCost(rows []Row, chips int) (jobs, minutes int, usd float64) {
	if chips == 0 {
		chips = 1
	}
	for _, r := range rows {
		if r.Skip == "" && r.ExportMinutes > 0 {
			jobs += chips
			minutes += chips * r.ExportMinutes
			usd += float64(chips) * r.ExportUSD
		}
	}
	return jobs, minutes, math.Round(usd*100) / 100
}

// phoneTable is the largest window each phone class can hold, among the windows that will
// be built (a skipped window is never published, so no phone gets it).
func phoneTable(cfg *config.Config, rows []Row) []config.PhoneFit {
	resident := map[int]int64{}
	for _, r := range rows {
		if r.Skip == "" {
			resident[r.Window] = r.ResidentBytes
		}
	}
	return config.PhoneTable(cfg.Export.PhoneClasses, resident)
}

// cacheTables is the phone table per KV cache over the windows built, nil for a backend
// whose rows have no choice of cache.
func cacheTables(cfg *config.Config, rows []Row) map[string][]config.PhoneFit {
	resident := map[string]map[int]int64{}
	for _, r := range rows {
		if r.Skip != "" {
			continue
		}
		for c, b := range r.ResidentByCache {
			if resident[c] == nil {
				resident[c] = map[int]int64{}
			}
			resident[c][r.Window] = b
		}
	}
	if len(resident) == 0 {
		return nil
	}
	out := map[string][]config.PhoneFit{}
	for c, byWindow := range resident {
		out[c] = config.PhoneTable(cfg.Export.PhoneClasses, byWindow)
	}
	return out
}

// pick sets the row's runner tier, or why none can build it, and returns the tier.
func pick(row *Row, tiers []config.Runner, fit sizing.Fit) *config.Runner {
	c := sizing.PickRunner(tiers, row.HostNeedBytes, row.DiskNeedBytes, fit)
	if c.Runner == nil {
		row.Skip = c.Skip
		return nil
	}
	row.Runner, row.RunnerTier, row.SwapGiB, row.UsesSwap = c.Runner.Label, c.Runner.Name, c.Runner.SwapGiB, c.UsesSwap
	return c.Runner
}
