package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/backend"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/publish"
)

func init() {
	register(Command{
		Name:    "publish",
		Summary: "publish exported windows to the model's Hugging Face repo (one commit per window)",
		Usage:   "REPORT_DIR [--backend " + strings.Join(backend.NamesOf(backend.Exportable()), "|") + "] [--context N] [--repo ORG/NAME] [--dry-run]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) int {
			backendName := fs.String("backend", "", "publish only this backend's reports (default: every report in REPORT_DIR)")
			window := fs.Int("context", 0, "publish only this window, in tokens (default: every window in REPORT_DIR)")
			repo := fs.String("repo", "", "Hub repo to publish to (default: each report's output_repo)")
			dry := fs.Bool("dry-run", false, "print the commit each window would make (files, sizes, the model card's diff) and write nothing")
			return func(env Env, args []string) int {
				if len(args) != 1 {
					fmt.Fprintln(env.Stderr, "publish: give exactly one REPORT_DIR: the export's --out folder")
					return ExitFailed
				}
				if *backendName != "" && backend.ByName(*backendName) == nil {
					fmt.Fprintf(env.Stderr, "publish: unknown backend %q for --backend (%s)\n", *backendName, strings.Join(backend.Names(), ", "))
					return ExitFailed
				}
				maskTokens(env)
				return runPublish(env, args[0], *backendName, *window, *repo, *dry)
			}
		},
	})
}

// runPublish loads every window first, so a refusal of any stops the run before the Hub
// is touched, then publishes them one commit each.
func runPublish(env Env, dir, backendName string, window int, repo string, dry bool) int {
	paths, err := publish.Find(dir, backendName, window)
	if err != nil {
		fmt.Fprintf(env.Stderr, "publish: %v\n", err)
		return ExitFailed
	}
	var wins []*publish.Window
	for _, p := range paths {
		w, err := publish.Load(dir, p, repo)
		if err != nil {
			fmt.Fprintf(env.Stderr, "publish: %v\n", err)
			return ExitFailed
		}
		wins = append(wins, w)
	}
	c := hub.New(hub.Options{UserAgent: "exe-expo"})
	if !dry && !c.Authenticated() {
		fmt.Fprintln(env.Stderr, "publish: no Hub token: set HF_TOKEN to a token that can write to the output repo")
		return ExitFailed
	}
	for _, w := range wins {
		if dry {
			p, err := publish.DryRun(env.Ctx, c, w)
			if err != nil {
				fmt.Fprintf(env.Stderr, "publish: %v\n", err)
				return ExitFailed
			}
			fmt.Fprint(env.Stdout, p.Text())
			continue
		}
		res, err := publish.Publish(env.Ctx, w, publish.Options{Client: c})
		if err != nil {
			fmt.Fprintf(env.Stderr, "publish: %v\n", err)
			return ExitFailed
		}
		if res.NoOp {
			fmt.Fprintf(env.Stdout, "%s %s: already in %s, unchanged; no commit made\n", w.Folder, w.Label, w.Repo)
		} else {
			fmt.Fprintf(env.Stdout, "%s %s: %s\n", w.Folder, w.Label, res.URL)
		}
		stepSummary(env, publish.Summary(w, res))
		if os.Getenv("GITHUB_OUTPUT") != "" {
			actionsFor(env).SetOutput("repo", w.Repo)
		}
	}
	return ExitOK
}
