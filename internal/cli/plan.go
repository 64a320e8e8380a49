package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

func planCommand() Command {
	return Command{
		Name:    "plan",
		Summary: "say whether a model can be exported, to which backends, and what every window costs",
		Usage:   "MODEL [--id ORG/NAME] [--revision R] [--backend B] [--json] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			id := fs.String("id", "", "the Hub id a local MODEL folder holds (the name rules and the QNN registry go by it; default: the folder's name)")
			revision := fs.String("revision", "main", "Hub revision (branch, tag or commit); an offline plan says it was not checked")
			only := fs.String("backend", "", "show one backend only: "+words(backend.Names(), "or"))
			asJSON := fs.Bool("json", false, "print the plan as JSON")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: the embedded config)")
			contexts := fs.String("contexts", "", "with --backend: the windows to build, in tokens, separated by commas (default: all of the backend's)")
			socs := fs.String("socs", "", "with --backend qnn or mediatek: the chips to build for, separated by commas (default: pipeline.yaml's)")
			fallback := fs.String("fallback", "", "with --backend: plan the fp32 fallback of the windows whose file the checks refused, as this gate (or smoke) --result file lists them")
			return func(env Env, args []string) error {
				if len(args) != 1 {
					return failf(ExitFailed, "plan: give exactly one MODEL: a Hub id such as Qwen/Qwen3-1.7B or a local folder holding config.json")
				}
				if *only != "" && backend.ByName(*only) == nil {
					return failf(ExitFailed, "plan: unknown backend %q (%s)", *only, strings.Join(backend.Names(), ", "))
				}
				if *only == "" && (*contexts != "" || *socs != "") {
					return failf(ExitFailed, "plan: --contexts and --socs pick the windows and chips of one backend; give it with --backend")
				}
				if *fallback != "" && (*only == "" || *contexts != "") {
					return failf(ExitFailed, "plan: --fallback plans one backend's fp32 windows from the failed windows of its gate result; give the backend with --backend, and no --contexts")
				}
				return runPlan(env, planRequest{ref: args[0], id: *id, revision: *revision, backend: *only, cfgDir: *cfgDir, asJSON: *asJSON,
					contexts: *contexts, socs: *socs, fallback: *fallback})
			}
		},
	}
}

// planRequest is one plan command line.
type planRequest struct {
	ref, id, revision, backend, cfgDir string
	contexts, socs                     string
	// fallback is a smoke or gate result whose failed windows the plan rebuilds in fp32.
	fallback string
	asJSON   bool
}

func runPlan(env Env, r planRequest) error {
	maskTokens(env)
	cfg, err := config.Load(r.cfgDir)
	if err != nil {
		return failf(ExitFailed, "plan: %w", err)
	}
	src, offline, err := openPlanModel(env, r, env.hubReader())
	if err != nil {
		return failf(ExitFailed, "plan: %w", err)
	}
	p := plan.Build(cfg, src, r.backend)
	p.Offline = offline
	code, reason := p.Decision(r.backend)
	var sel plan.Selection
	if code == ExitOK && r.backend != "" {
		if sel, err = selectWindows(p, r); err != nil {
			return failf(ExitFailed, "plan: %w", err)
		}
		o := env.outputs()
		o.Windows, o.Skipped, o.SoCs, o.Calibrate = sel.Windows, sel.Skipped, sel.SoCs, sel.Calibrate
	}
	stepSummary(env, planSummary(p))
	if r.backend != "" && code == ExitOK {
		stepSummary(env, sizingTable(p, r.backend, sel))
	}
	if r.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(p)
	} else {
		err = p.WriteText(env.Stdout)
	}
	if err != nil {
		return failf(ExitFailed, "plan: write: %w", err)
	}
	if code != ExitOK {
		return failf(code, "plan: %s", reason)
	}
	return nil
}

// openPlanModel opens MODEL; --id names the Hub id a local folder holds, as for export,
// and means nothing for a Hub id.
func openPlanModel(env Env, r planRequest, hub source.HubReader) (*model.Source, bool, error) {
	if r.id == "" {
		return source.Open(env.Ctx, r.ref, r.revision, hub)
	}
	if !source.IsDir(r.ref) {
		return nil, false, fmt.Errorf("--id names the Hub id a local model folder holds, and %s is not a folder", r.ref)
	}
	src, err := source.OpenDir(env.Ctx, r.ref, r.id)
	var bad *source.IDError
	if errors.As(err, &bad) {
		return nil, false, fmt.Errorf("--id %q is not a Hugging Face model id (org/name)", bad.ID)
	}
	return src, false, err
}

// selectWindows is what the backend's export jobs build: the windows asked for, or with
// --fallback the fp32 windows of those the checks refused.
func selectWindows(p *plan.Plan, r planRequest) (plan.Selection, error) {
	if r.fallback == "" {
		return p.Select(r.backend, r.contexts, r.socs)
	}
	checked, err := result.ReadChecks(r.fallback)
	if err != nil {
		return plan.Selection{}, err
	}
	return p.SelectFallback(r.backend, checked.Outputs.Failed)
}
