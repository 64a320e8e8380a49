package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/internal/watch"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

func watchCommand() Command {
	return Command{
		Name:    "watch",
		Summary: "check the watched Hugging Face orgs for new models and dispatch their exports, one backend after the other",
		Usage:   "--state FILE [--state-branch BRANCH] [--backfill ID,ID] [--dry-run] [--requeue] [--summary FILE] [--repo OWNER/NAME] [--ref BRANCH] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			var r watchRequest
			fs.StringVar(&r.state, "state", "", "the state file (seen.json): a local file, or its path on --state-branch")
			fs.StringVar(&r.branch, "state-branch", "", "keep the state on this branch of the repository, read and written through the GitHub API (default: the local --state file)")
			backfill := fs.String("backfill", "", "model ids to check and export even if seen or outside the org filter, separated by commas")
			fs.BoolVar(&r.opts.DryRun, "dry-run", false, "report what would be dispatched, without dispatching or saving the state")
			fs.BoolVar(&r.opts.Requeue, "requeue", false, "dispatch again every backend that was dispatched before")
			fs.StringVar(&r.summary, "summary", "", "append the Markdown summary to this file (the job's $GITHUB_STEP_SUMMARY)")
			fs.StringVar(&r.cfgDir, "config", "", "directory holding pipeline.yaml and versions.env (default: the embedded config)")
			fs.StringVar(&r.repo, "repo", os.Getenv("GITHUB_REPOSITORY"), "the GitHub repository (owner/name) whose export workflows run ($GITHUB_REPOSITORY when set)")
			fs.StringVar(&r.ref, "ref", envOr("GITHUB_REF_NAME", "main"), "the branch the export workflows are dispatched on ($GITHUB_REF_NAME when set)")
			return func(env Env, args []string) error {
				if len(args) != 0 {
					return failf(ExitFailed, "watch: takes no arguments, not %q; models to export now go in --backfill", strings.Join(args, " "))
				}
				if r.state == "" {
					return failf(ExitFailed, "watch: give --state FILE, the seen.json that remembers the models already checked")
				}
				if err := r.checkNames(); err != nil {
					return failf(ExitFailed, "watch: %w", err)
				}
				r.opts.Backfill = splitIDs(*backfill)
				for _, id := range r.opts.Backfill {
					if !model.ValidID(id) {
						return failf(ExitFailed, "watch: --backfill %q is not a Hugging Face model id (org/name)", id)
					}
				}
				return runWatch(env, r)
			}
		},
	}
}

// watchRequest is one watch command line.
type watchRequest struct {
	state, branch, summary, cfgDir, repo, ref string
	opts                                      watch.Options
}

// checkNames refuses, before any request, a repository, branch or state path GitHub would
// refuse. An empty --repo is refused later, with the config loaded, as before.
func (r watchRequest) checkNames() error {
	if r.repo != "" {
		if _, _, err := watch.ParseRepo("the GitHub repository", r.repo); err != nil {
			return fmt.Errorf("%w; give --repo OWNER/NAME or set GITHUB_REPOSITORY", err)
		}
	}
	if err := watch.CheckBranch("--ref", r.ref); err != nil {
		return err
	}
	if r.branch == "" {
		return nil // the state is a local file
	}
	if err := watch.CheckBranch("--state-branch", r.branch); err != nil {
		return err
	}
	return watch.CheckStatePath("--state", r.state)
}

func splitIDs(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

func runWatch(env Env, r watchRequest) error {
	maskTokens(env)
	fail := func(err error) error {
		return failf(ExitFailed, "watch: %w", err)
	}
	cfg, err := config.Load(r.cfgDir)
	if err != nil {
		return fail(err)
	}
	if r.repo == "" {
		return fail(errors.New("give --repo OWNER/NAME (or set GITHUB_REPOSITORY): the repository whose export workflows are dispatched"))
	}
	gh, err := watch.NewGitHub(os.Getenv("GITHUB_API_URL"), r.repo, envOr("GH_TOKEN", os.Getenv("GITHUB_TOKEN")), r.ref)
	if err != nil {
		return fail(err)
	}
	var store watch.Store = watch.FileStore{Path: r.state}
	if r.branch != "" {
		store = &watch.BranchStore{GitHub: gh, Branch: r.branch, Path: r.state}
	}
	sum, err := watchPass(env.Ctx, env.Hub, cfg, gh, store, r.opts)
	if err != nil {
		return fail(err)
	}
	md := sum.Markdown()
	fmt.Fprint(env.Stdout, md)
	if r.summary != "" {
		if err := appendFile(r.summary, md); err != nil {
			return fail(err)
		}
	}
	if !r.opts.DryRun {
		if err := store.Save(env.Ctx, sum.State); err != nil {
			if errors.Is(err, watch.ErrConflict) {
				err = fmt.Errorf("%w; this run's dispatches are in flight, so the next run counts them and does not repeat them", err)
			}
			return fail(err)
		}
	}
	if len(sum.Failed) > 0 {
		return failf(ExitFailed, "watch: %d dispatch(es) failed; they stay pending and are retried next run", len(sum.Failed))
	}
	return nil
}

// watchPass loads the state and runs the watcher once over the Hub and the repository's
// export workflows, one stage per exportable backend in plan order.
func watchPass(ctx context.Context, client *hub.Client, cfg *config.Config, gh *watch.GitHub, store watch.Store, opts watch.Options) (*watch.Summary, error) {
	state, err := store.Load(ctx)
	if err != nil {
		return nil, err
	}
	var stages []watch.Stage
	for _, b := range backend.Exportable() {
		// the generator writes one export workflow per exportable backend under this name
		stages = append(stages, watch.Stage{Backend: b.Name, Workflow: "export-" + b.Name + ".yml"})
	}
	w := &watch.Watcher{
		Config:   cfg,
		Hub:      watch.HubSource{Client: client, Source: source.Hub{Client: client}},
		Actions:  gh,
		Stages:   stages,
		Evaluate: func(src *model.Source) *family.Verdict { return backend.Evaluate(cfg, src) },
		Cost:     func(src *model.Source, name string) *watch.Cost { return planCost(cfg, src, name) },
		Catalog: func(ctx context.Context) (*catalog.Catalog, error) {
			return readCatalog(ctx, client, cfg.Hub.Catalog())
		},
		Runtime:     func(name string) catalog.Runtime { return runtimeFor(cfg, name) },
		BackendName: exeExpoName,
	}
	return w.Pass(ctx, state, opts)
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fileutil.Error("open the summary file", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		return fileutil.Error("write the summary file", path, err)
	}
	if err := f.Close(); err != nil {
		return fileutil.Error("write the summary file", path, err)
	}
	return nil
}

// planCost is what plan says exporting src to the backend costs; nil when plan has no
// figure (no sizing, or no measured time for the backend).
func planCost(cfg *config.Config, src *model.Source, name string) *watch.Cost {
	p := plan.Build(cfg, src, name)
	if len(p.Backends) != 1 || p.Backends[0].Jobs == 0 {
		return nil
	}
	b := p.Backends[0]
	return &watch.Cost{Jobs: b.Jobs, Minutes: b.Minutes, USD: b.USD}
}

// readCatalog is the org's catalog, or nil when there is none yet.
func readCatalog(ctx context.Context, c *hub.Client, repo string) (*catalog.Catalog, error) {
	b, err := c.ReadFile(ctx, repo, "main", catalog.File)
	if errors.Is(err, hub.ErrRepoNotFound) || errors.Is(err, hub.ErrEntryNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return catalog.Decode(repo+"/"+catalog.File, b)
}

// exeExpoName is exe-expo's name of the backend a config.json's "backend" names.
func exeExpoName(configName string) string {
	if b := backend.ByConfigName(configName); b != nil {
		return b.Name
	}
	return configName
}

// runtimeFor is the runtime the pipeline builds a backend's files for now, in the words
// publish records it (config.json's runtime_version, qnn_sdk_version, neuropilot_sdk).
func runtimeFor(cfg *config.Config, name string) catalog.Runtime {
	r := catalog.Runtime{ExecuTorch: cfg.Versions.ExecuTorch}
	if b := backend.ByConfigName(name); b != nil && b.Tools.Versions != nil {
		v := b.Tools.Versions(cfg.Versions)
		r.QAIRT, r.NeuroPilotSDK = v["qairt"], v["neuropilot_sdk"]
	}
	return r
}
