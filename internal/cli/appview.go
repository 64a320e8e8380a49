package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"path"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/publish"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

func appviewCommand() Command {
	return Command{
		Name:    "appview",
		Summary: "show what the openweights app and ExecuServe do with a repo (published, or an export folder before publish)",
		Usage:   "REPO|OUT [--consumer app|execuserve] [--repo ORG/NAME] [--json] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			repo := fs.String("repo", "", "with an export folder: the Hub repo it will be published to (default: each report's output_repo)")
			asJSON := fs.Bool("json", false, "print the view as JSON")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml, whose phone classes the files are held against (default: the embedded config)")
			consumer := fs.String("consumer", "", "only this consumer's verdict: app (the openweights app) or execuserve (default: both)")
			return func(env Env, args []string) error {
				if len(args) != 1 {
					return failf(ExitFailed, "appview: give exactly one REPO (a Hub id such as experimentalmachines/Qwen3-1.7B-ExecuTorch) or OUT (an export folder)")
				}
				if *consumer != "" && *consumer != consumerApp && *consumer != consumerES {
					return failf(ExitFailed, "appview: --consumer %q: give %s or %s (or leave it out for both)", *consumer, consumerApp, consumerES)
				}
				return runAppview(env, args[0], *repo, *cfgDir, *consumer, *asJSON)
			}
		},
	}
}

// The consumers --consumer names.
const (
	consumerApp = "app"
	consumerES  = "execuserve"
)

// verdicts are the consumers' views, as --json prints them.
type verdicts struct {
	App        *appview.View   `json:"app,omitempty"`
	ExecuServe *appview.ESView `json:"execuserve,omitempty"`
}

// runAppview builds the view of a Hub repo or of an export folder laid out as publish will
// lay it out, for the app, ExecuServe or both, prints it, and ends with exit 3 when either
// would drop or refuse a file exe-expo built for it.
func runAppview(env Env, ref, repo, cfgDir, consumer string, asJSON bool) error {
	cfg, err := config.Load(cfgDir)
	if err != nil {
		return failf(ExitFailed, "appview: %w", err)
	}
	var (
		r       appview.Repo
		intents map[string]appview.Intent
	)
	if source.IsDir(ref) {
		if r, intents, err = publish.Layout(env.Ctx, ref, repo); err != nil {
			return failf(ExitFailed, "appview: %w", err)
		}
	} else {
		if repo != "" {
			return failf(ExitFailed, "appview: --repo names the repo an export folder will be published to, and %s is not a folder", ref)
		}
		if err := model.CheckID("REPO", ref); err != nil {
			return failf(ExitFailed, "appview: %w", err)
		}
		if r, err = hubRepo(env, ref); err != nil {
			return failf(ExitFailed, "appview: %w", err)
		}
		intents = appview.Intents(r.Configs, appName)
	}
	var out verdicts
	if consumer != consumerES {
		out.App = appview.Build(r, appview.Phones(cfg.Export.PhoneClasses), intents)
	}
	if consumer != consumerApp {
		out.ExecuServe = appview.BuildExecuServe(r, intents)
	}
	if err := writeVerdicts(env, out, asJSON); err != nil {
		return failf(ExitFailed, "appview: write: %w", err)
	}
	var broken []string
	if out.App != nil && len(out.App.Problems) > 0 {
		broken = append(broken, fmt.Sprintf("%d of the app's rules (first: %s)", len(out.App.Problems), out.App.Problems[0]))
	}
	if out.ExecuServe != nil && len(out.ExecuServe.Problems) > 0 {
		broken = append(broken, fmt.Sprintf("%d of ExecuServe's rules (first: %s)", len(out.ExecuServe.Problems), out.ExecuServe.Problems[0]))
	}
	if len(broken) > 0 {
		return failf(ExitNotEligible, "appview: %s breaks %s", r.ID, strings.Join(broken, ", and "))
	}
	return nil
}

// writeVerdicts prints the views: JSON, or the app's and ExecuServe's text one after the other.
func writeVerdicts(env Env, out verdicts, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if out.App != nil {
		if err := out.App.WriteText(env.Stdout); err != nil {
			return err
		}
	}
	if out.ExecuServe != nil {
		if out.App != nil {
			fmt.Fprintln(env.Stdout)
		}
		return out.ExecuServe.WriteText(env.Stdout)
	}
	return nil
}

// appName is the name the app must read for an exe-expo backend folder's files; a name no
// linked backend has is kept as it is.
func appName(name string) string {
	if b := backend.ByConfigName(name); b != nil {
		return b.AppName
	}
	return name
}

// hubRepo lists a Hub repo as the app sees it: every file with its size (the LFS size for
// a large one), and each folder's config.json, read at the same commit.
func hubRepo(env Env, id string) (appview.Repo, error) {
	info, err := env.Hub.ModelInfo(env.Ctx, id, hub.InfoOptions{Blobs: true})
	if err != nil {
		return appview.Repo{}, fmt.Errorf("read %s: %w", id, err)
	}
	r := appview.Repo{ID: id, Configs: map[string][]byte{}}
	for _, s := range info.Siblings {
		size := s.Size
		if s.LFS != nil {
			size = s.LFS.Size
		}
		r.Files = append(r.Files, appview.File{Path: s.Path, Size: size})
		if path.Base(s.Path) != "config.json" {
			continue
		}
		b, err := env.Hub.ReadFile(env.Ctx, id, info.SHA, s.Path)
		if err != nil {
			return appview.Repo{}, fmt.Errorf("read %s of %s: %w", s.Path, id, err)
		}
		r.Configs[strings.TrimSuffix(strings.TrimSuffix(s.Path, "config.json"), "/")] = b
	}
	return r, nil
}
