package cli

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/cost"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

func costsCommand() Command {
	return Command{
		Name:    "costs",
		Summary: "fit the export-time table plan costs runs with, from pipeline.yaml's measurements and the export reports under OUT folders",
		Usage:   "[OUT...] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: the embedded config)")
			return func(env Env, args []string) error { return runCosts(env, *cfgDir, args) }
		},
	}
}

// runCosts prints each backend's fit, then the export_times entries (the configuration's
// and one per report with a time) for pipeline.yaml.
func runCosts(env Env, cfgDir string, outs []string) error {
	cfg, err := config.Load(cfgDir)
	if err != nil {
		return failf(ExitFailed, "costs: %w", err)
	}
	times := append([]config.ExportTime(nil), cfg.ExportTimes...)
	added := 0
	for _, out := range outs {
		paths, err := report.Find(out, "", "")
		if err != nil {
			return failf(ExitFailed, "costs: %w", err)
		}
		if len(paths) == 0 {
			return failf(ExitFailed, "costs: %s holds no export report (export-report-*.json in a backend folder)", out)
		}
		for _, p := range paths {
			r, err := report.Read(p)
			if err != nil {
				return failf(ExitFailed, "costs: %w", err)
			}
			if t, ok := cost.FromReport(p, r); ok {
				times = append(times, t)
				added++
			}
		}
	}
	fits := cost.FitAll(times)
	names := make([]string, 0, len(fits))
	for n := range fits {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Export-time fit from %d measurement(s), %d of them from export reports:\n", len(times), added)
	for _, n := range names {
		f := fits[n]
		if f.Flat {
			fmt.Fprintf(&b, "  %-9s %.0f s whatever the model and window (%d point(s))\n", n, f.FlatSeconds, f.Points)
			continue
		}
		like := ""
		if f.Like != "" {
			like = ", " + f.Like + "'s fit: none of its own measured"
		}
		fmt.Fprintf(&b, "  %-9s (%.0f s + %.0f s per billion parameters) at 2k, × (window / 2048)^%.2f (%d point(s)%s)\n",
			n, f.FixedSeconds, f.SecondsPerGParam, f.Growth, f.Points, like)
	}
	b.WriteString("\nFor pipeline.yaml:\n\n" + cost.YAML(times))
	fmt.Fprint(env.Stdout, b.String())
	return nil
}
