package cli

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
)

// newHub builds the Hub client plan uses; nil means offline only. It is a variable so the
// Hub client package can plug itself in (and tests can point it at a local server).
var newHub = func(env Env) (plan.Hub, error) { return nil, nil }

func init() {
	register(Command{
		Name:    "plan",
		Summary: "say whether a model can be exported, to which backends, and what every window costs",
		Usage:   "MODEL [--revision R] [--backend B] [--json] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) int {
			revision := fs.String("revision", "main", "Hub revision (branch, tag or commit)")
			backend := fs.String("backend", "", "show one backend only: xnnpack, vulkan, qnn, mediatek or enn")
			asJSON := fs.Bool("json", false, "print the plan as JSON")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: the embedded config)")
			return func(env Env, args []string) int {
				if len(args) != 1 {
					fmt.Fprintln(env.Stderr, "plan: give exactly one MODEL: a Hub id such as Qwen/Qwen3-1.7B or a local folder holding config.json")
					return ExitFailed
				}
				if *backend != "" && !knownBackend(*backend) {
					fmt.Fprintf(env.Stderr, "plan: unknown backend %q (xnnpack, vulkan, qnn, mediatek, enn)\n", *backend)
					return ExitFailed
				}
				return runPlan(env, args[0], *revision, *backend, *cfgDir, *asJSON)
			}
		},
	})
}

func knownBackend(b string) bool {
	for _, k := range family.Backends {
		if k == b {
			return true
		}
	}
	return false
}

func runPlan(env Env, ref, revision, backend, cfgDir string, asJSON bool) int {
	maskTokens(env)
	cfg, err := config.Load(cfgDir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: %v\n", err)
		return ExitFailed
	}
	hub, err := newHub(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: %v\n", err)
		return ExitFailed
	}
	src, offline, err := plan.Open(env.Ctx, ref, revision, hub)
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: %v\n", err)
		return ExitFailed
	}
	p := plan.Build(cfg, src, backend)
	p.Offline = offline
	stepSummary(env, planSummary(p))
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(p)
	} else {
		err = p.WriteText(env.Stdout)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: write: %v\n", err)
		return ExitFailed
	}
	if !p.Verdict.Eligible {
		return ExitNotEligible
	}
	return ExitOK
}
