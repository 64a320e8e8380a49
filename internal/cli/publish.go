package cli

import (
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/publish"
	"github.com/experimentalmachines/exe-expo/internal/release"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

func publishCommand() Command {
	return Command{
		Name:    "publish",
		Summary: "publish exported windows to the model's Hugging Face repo (one commit per window)",
		Usage:   "REPORT_DIR [--backend " + strings.Join(backend.NamesOf(backend.Exportable()), "|") + "] [--context N] [--repo ORG/NAME] [--skipped JSON]... [--dry-run] [--release] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			backendName := fs.String("backend", "", "publish only this backend's reports (default: every report in REPORT_DIR)")
			window := fs.Int("context", 0, "publish only this window, in tokens (default: every window in REPORT_DIR)")
			repo := fs.String("repo", "", "Hub repo to publish to (default: each report's output_repo)")
			dry := fs.Bool("dry-run", false, "print the commit each window would make (files, sizes, the model card's diff) and write nothing")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env, whose windows a report must have (default: the embedded config)")
			var skipped listFlag
			fs.Var(&skipped, "skipped", "a JSON list of windows not built, as a result's outputs list them (repeat): each folder's config.json and the card say why")
			rel := fs.Bool("release", false, "also make each window a GitHub release of $GITHUB_REPOSITORY (token: $GH_TOKEN), files over 2 GiB linked on the Hub")
			return func(env Env, args []string) error {
				if len(args) != 1 {
					return failf(ExitFailed, "publish: give exactly one REPORT_DIR: the export's --out folder")
				}
				if *backendName != "" && backend.ByName(*backendName) == nil {
					return failf(ExitFailed, "publish: unknown backend %q for --backend (%s)", *backendName, strings.Join(backend.Names(), ", "))
				}
				if *dry && *rel {
					return failf(ExitFailed, "publish: --dry-run writes nothing, so it takes no --release")
				}
				if *repo != "" {
					if err := model.CheckID("--repo", *repo); err != nil {
						return failf(ExitFailed, "publish: %w", err)
					}
				}
				var notBuilt []result.Skipped
				for _, s := range skipped {
					var list []result.Skipped
					if err := decodeList("--skipped", s, &list); err != nil {
						return failf(ExitFailed, "publish: %w", err)
					}
					notBuilt = append(notBuilt, list...)
				}
				maskTokens(env)
				return runPublish(env, publishRun{dir: args[0], backend: *backendName, window: *window, repo: *repo, dry: *dry, release: *rel, cfgDir: *cfgDir, skipped: notBuilt})
			}
		},
	}
}

// publishRun is what the command line asked publish for.
type publishRun struct {
	dir, backend, repo, cfgDir string
	window                     int
	dry, release               bool
	// skipped are the run's windows not built, with why (--skipped)
	skipped []result.Skipped
}

// runPublish loads every window first, so a refusal of any stops the run before the Hub
// is touched, then publishes them one commit each (and one release each with --release).
func runPublish(env Env, o publishRun) error {
	dir := o.dir
	paths, err := publish.Find(dir, o.backend, o.window)
	if err != nil {
		return failf(ExitFailed, "publish: %w", err)
	}
	cfg, err := config.Load(o.cfgDir)
	if err != nil {
		return failf(ExitFailed, "publish: %w", err)
	}
	var wins []*publish.Window
	for _, p := range paths {
		w, err := publish.LoadContext(env.Ctx, dir, p, o.repo)
		if err == nil {
			err = w.CheckWindow(cfg)
		}
		if err != nil {
			return failf(ExitFailed, "publish: %w", err)
		}
		w.SetSkipped(o.skipped)
		wins = append(wins, w)
	}
	c := env.Hub
	if !o.dry && !c.Authenticated() {
		return failf(ExitFailed, "publish: no Hub token: set HF_TOKEN to a token that can write to the output repo")
	}
	var gh *release.Publisher
	if o.release {
		if gh, err = release.FromEnv(); err != nil {
			return failf(ExitFailed, "publish: --release: %w", err)
		}
	}
	for _, w := range wins {
		if o.dry {
			p, err := publish.DryRun(env.Ctx, c, w)
			if err != nil {
				return failf(ExitFailed, "publish: %w", err)
			}
			fmt.Fprint(env.Stdout, p.Text())
			publishOutputs(env.outputs(), c.Endpoint(), w)
			continue
		}
		res, err := publish.Publish(env.Ctx, w, publish.Options{Client: c})
		if err != nil {
			return failf(ExitFailed, "publish: %w", err)
		}
		for _, warn := range res.Warnings {
			fmt.Fprintf(env.Stderr, "publish: warning: %s\n", warn)
		}
		switch {
		case res.NoOp:
			fmt.Fprintf(env.Stdout, "%s %s: already in %s, unchanged; no commit made\n", w.Folder, w.Label, w.Repo)
		case res.Recovered:
			fmt.Fprintf(env.Stdout, "%s %s: committed to %s (the Hub's answer was lost; a re-read found the window in place)\n", w.Folder, w.Label, w.Repo)
		default:
			fmt.Fprintf(env.Stdout, "%s %s: %s\n", w.Folder, w.Label, res.URL)
		}
		if gh != nil {
			if err := publishRelease(env, gh, dir, w); err != nil {
				return err
			}
		}
		stepSummary(env, publish.Summary(w, res))
		if os.Getenv("GITHUB_OUTPUT") != "" {
			actionsFor(env).SetOutput("repo", w.Repo)
		}
		publishOutputs(env.outputs(), c.Endpoint(), w)
	}
	if o.dry {
		return nil
	}
	return updateCatalog(env, c, cfg, wins)
}

// updateCatalog brings the org's catalog up to date with each repo published, once per
// repo, after its windows landed.
func updateCatalog(env Env, c *hub.Client, cfg *config.Config, wins []*publish.Window) error {
	done := map[string]bool{}
	for _, w := range wins {
		if done[w.Repo] {
			continue
		}
		done[w.Repo] = true
		changed, err := catalog.Update(env.Ctx, c, cfg.Hub.Catalog(), cfg.Hub.Org, w.Repo, catalog.Options{})
		if err != nil {
			return failf(ExitFailed, "publish: the Hub has %s, but the catalog %s could not be updated: %w; run `exe-expo catalog --rebuild` to bring it up to date", w.Repo, cfg.Hub.Catalog(), err)
		}
		if changed {
			fmt.Fprintf(env.Stdout, "catalog %s: %s updated\n", cfg.Hub.Catalog(), w.Repo)
		} else {
			fmt.Fprintf(env.Stdout, "catalog %s: %s already current\n", cfg.Hub.Catalog(), w.Repo)
		}
	}
	return nil
}

// publishOutputs records the repo published to (the last window's), its page, and the
// .pte files sent, as paths in the repo.
func publishOutputs(o *result.Outputs, endpoint string, w *publish.Window) {
	o.Repo = w.Repo
	o.URL = strings.TrimRight(endpoint, "/") + "/" + w.Repo
	for _, f := range w.Files {
		if path.Ext(f.PathInRepo) == ".pte" {
			o.Files = append(o.Files, f.PathInRepo)
		}
	}
}

// publishRelease makes the window's GitHub release, after its Hub commit.
func publishRelease(env Env, gh *release.Publisher, dir string, w *publish.Window) error {
	rel, err := release.ForReport(dir, filepath.Join(dir, filepath.FromSlash(w.ReportPath)))
	if err == nil {
		_, err = gh.Publish(env.Ctx, rel)
	}
	if err != nil {
		return failf(ExitFailed, "publish: the Hub has %s %s, but its GitHub release failed: %w", w.Folder, w.Label, err)
	}
	fmt.Fprintf(env.Stdout, "%s %s: GitHub release %s (%d assets", w.Folder, w.Label, rel.Tag, len(rel.Assets))
	if n := len(rel.TooLarge); n > 0 {
		fmt.Fprintf(env.Stdout, ", %d file(s) over 2 GiB linked on the Hub", n)
	}
	fmt.Fprintln(env.Stdout, ")")
	return nil
}
