package workflow

import (
	"fmt"
	"slices"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
)

// checkArch is where files are checked before they publish: ExecuTorch's LLM runner is
// built for x86-64 Linux, and the seed README runs "x86 for the runner check".
const checkArch = "x64"

// target is one file to render: its path, its template, the CLI commands it runs beyond
// plan, export and inspect (absent commands leave the file out), and what it reads.
type target struct {
	out      string
	template string
	requires []string
	view     view
}

// view is what a template reads. Everything in it comes from the config and the backend
// values; templates hold wiring only.
type view struct {
	Versions config.Versions
	// GitHub is this repository, which a called workflow checks out by name.
	GitHub config.GitHub
	// Windows are the context tiers, ascending.
	Windows []int
	// Runners are every tier, as pipeline.yaml lists them.
	Runners []config.Runner
	// Control runs the small jobs (plan, watch): the tier with the fewest vCPUs.
	Control config.Runner
	// Checker runs the checks, the publish and CI: the smallest x86-64 tier.
	Checker config.Runner
	// Solver runs the once-per-model GPTQ solve (export.solve.runner).
	Solver config.Runner
	// Export is the backend of an export workflow; nil elsewhere.
	Export *exportView
	// Probes are the backends probe-runner can export: those built once, for no chip.
	Probes []exportView
	// Audited is the backend audit-published grades: the first whose files the x86 checker
	// runs (the gate needs that).
	Audited string
	// Schedule is the watcher's cron (watch.schedule); empty: by hand only.
	Schedule string
	// JobLimit is every long job's timeout-minutes (export.job_limit_minutes): the same
	// number plan holds each window's fitted export time against, so a window plan lets
	// into the matrix is one its job's timeout lets finish.
	JobLimit int
}

// exportView is one backend as its workflow needs it.
type exportView struct {
	Name, Title string
	// Windows are the backend's windows, ascending (context tiers and its extra windows).
	Windows []int
	// Chips are the configured chips of a per-chip backend, ChipKey where pipeline.yaml
	// lists them; both empty for a backend built once.
	Chips   []string
	ChipKey string
	// LLM backends take --qmode (QModes) and GPTQ codes; GPTQ runs the solve job for them.
	LLM    bool
	QModes []string
	GPTQ   bool
	// SourceTree is the folder of the ExecuTorch source its recipe runs, if any.
	SourceTree string
	// Smoke says the x86 checker runs its files, so the verify job needs ExecuTorch's
	// runtime; other backends get the structural check in Go alone.
	Smoke bool
	// Fallback runs the fp32 fallback jobs: a window whose quantized file the decision gate
	// refuses is rebuilt unquantized where the fp32 file fits the phone, gated and published
	// in its place. Only a backend the gate grades (its files run here, its solve makes the
	// fp32 reference) can fall back.
	Fallback bool
	// Calibrate has the workflow hold the calibrate job (export.qnn.calibrate_once): one
	// calibration per chip, at CalibrationWindow, which every export job downloads and
	// builds from. It runs where the plan has one (size-window's calibrate output: a recipe
	// with a SeqMSE search, on the runner plan picked for that window); a failed calibrate
	// job leaves each export job to calibrate itself.
	Calibrate         bool
	CalibrationWindow int
}

// plan lists the files to render: one export workflow per exportable backend, in plan
// order, then the others, then actionlint's configuration.
func plan(src Source) ([]target, error) {
	base, err := newView(src.Config)
	if err != nil {
		return nil, err
	}
	var out []target
	for _, b := range backend.Exportable() {
		v := base
		ev := exportOf(src.Config, b)
		v.Export = &ev
		out = append(out, target{out: OutputDir + "/export-" + b.Name + ".yml", template: "export.yml.tmpl", view: v})
	}
	for _, b := range backend.Exportable() {
		if b.Chips == nil {
			base.Probes = append(base.Probes, exportOf(src.Config, b))
		}
	}
	return append(out,
		target{out: OutputDir + "/watch-hf.yml", template: "watch-hf.yml.tmpl", requires: []string{"watch"}, view: base},
		target{out: OutputDir + "/probe-runner.yml", template: "probe-runner.yml.tmpl", view: base},
		target{out: OutputDir + "/audit-published.yml", template: "audit-published.yml.tmpl", requires: []string{"audit"}, view: base},
		target{out: OutputDir + "/ci.yml", template: "ci.yml.tmpl", view: base},
		target{out: LintConfig, template: "actionlint.yaml.tmpl", view: base},
	), nil
}

func newView(cfg *config.Config) (view, error) {
	v := view{Versions: cfg.Versions, GitHub: cfg.GitHub, Runners: cfg.Runners, Windows: slices.Sorted(slices.Values(cfg.Export.ContextTiers)), Schedule: cfg.Watch.Schedule,
		JobLimit: cfg.Export.JobLimitMinutes}
	var ok bool
	if v.Control, ok = smallest(cfg.Runners, ""); !ok {
		return v, fmt.Errorf("pipeline.yaml lists no runners: the workflows need at least one tier to run on")
	}
	if v.Checker, ok = smallest(cfg.Runners, checkArch); !ok {
		return v, fmt.Errorf("pipeline.yaml lists no %s runner: the checks run on x86-64 because ExecuTorch's LLM runner is built for it", checkArch)
	}
	for _, b := range backend.Exportable() {
		if b.Smoke && v.Audited == "" {
			v.Audited = b.Name
		}
	}
	if v.Solver, ok = cfg.Runner(cfg.Export.Solve.Runner); !ok {
		return v, fmt.Errorf("pipeline.yaml: export.solve.runner %q is not one of the runners", cfg.Export.Solve.Runner)
	}
	return v, nil
}

// smallest is the tier with the fewest vCPUs (of arch, when given); the first listed wins
// a tie, so the choice follows pipeline.yaml's order.
func smallest(runners []config.Runner, arch string) (config.Runner, bool) {
	var best config.Runner
	found := false
	for _, r := range runners {
		if arch != "" && r.Arch != arch {
			continue
		}
		if !found || r.VCPU < best.VCPU {
			best, found = r, true
		}
	}
	return best, found
}

func exportOf(cfg *config.Config, b *backend.Backend) exportView {
	ev := exportView{
		Name: b.Name, Title: b.Title, Windows: b.Windows(cfg),
		LLM: b.LLM, GPTQ: b.Actions.GPTQ, SourceTree: b.Tools.SourceTree, Smoke: b.Smoke,
		Fallback: b.LLM && b.Smoke && b.Actions.GPTQ,
	}
	if b.LLM {
		ev.QModes = config.QModes()
	}
	if b.Chips != nil {
		ev.Chips = slices.Clone(b.Chips.List(cfg))
		ev.ChipKey = b.Chips.Key
	}
	if c := b.Calibration; c != nil && b.Chips != nil && c.Once(cfg) && c.Window(cfg) > 0 {
		ev.Calibrate, ev.CalibrationWindow = true, c.Window(cfg)
	}
	return ev
}
