package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/backend"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/source"
)

// newHub builds the Hub client plan uses; nil means offline only. It is a variable so the
// Hub client package can plug itself in (and tests can point it at a local server).
var newHub = func(env Env) (source.HubReader, error) { return nil, nil }

func init() {
	register(Command{
		Name:    "plan",
		Summary: "say whether a model can be exported, to which backends, and what every window costs",
		Usage:   "MODEL [--id ORG/NAME] [--revision R] [--backend B] [--json] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) int {
			id := fs.String("id", "", "the Hub id a local MODEL folder holds (the name rules and the QNN registry go by it; default: the folder's name)")
			revision := fs.String("revision", "main", "Hub revision (branch, tag or commit); an offline plan says it was not checked")
			only := fs.String("backend", "", "show one backend only: "+words(backend.Names(), "or"))
			asJSON := fs.Bool("json", false, "print the plan as JSON")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: the embedded config)")
			return func(env Env, args []string) int {
				if len(args) != 1 {
					fmt.Fprintln(env.Stderr, "plan: give exactly one MODEL: a Hub id such as Qwen/Qwen3-1.7B or a local folder holding config.json")
					return ExitFailed
				}
				if *only != "" && backend.ByName(*only) == nil {
					fmt.Fprintf(env.Stderr, "plan: unknown backend %q (%s)\n", *only, strings.Join(backend.Names(), ", "))
					return ExitFailed
				}
				return runPlan(env, planRequest{ref: args[0], id: *id, revision: *revision, backend: *only, cfgDir: *cfgDir, asJSON: *asJSON})
			}
		},
	})
}

// planRequest is one plan command line.
type planRequest struct {
	ref, id, revision, backend, cfgDir string
	asJSON                             bool
}

func runPlan(env Env, r planRequest) int {
	maskTokens(env)
	cfg, err := config.Load(r.cfgDir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: %v\n", err)
		return ExitFailed
	}
	hub, err := newHub(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: %v\n", err)
		return ExitFailed
	}
	src, offline, err := openPlanModel(env, r, hub)
	if err != nil {
		fmt.Fprintf(env.Stderr, "plan: %v\n", err)
		return ExitFailed
	}
	p := plan.Build(cfg, src, r.backend)
	p.Offline = offline
	stepSummary(env, planSummary(p))
	if r.asJSON {
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
