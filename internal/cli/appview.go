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
		Summary: "show what the openweights app does with a repo (published, or an export folder before publish)",
		Usage:   "REPO|OUT [--repo ORG/NAME] [--json] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			repo := fs.String("repo", "", "with an export folder: the Hub repo it will be published to (default: each report's output_repo)")
			asJSON := fs.Bool("json", false, "print the view as JSON")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml, whose phone classes the files are held against (default: the embedded config)")
			return func(env Env, args []string) error {
				if len(args) != 1 {
					return failf(ExitFailed, "appview: give exactly one REPO (a Hub id such as experimentalmachines/Qwen3-1.7B-ExecuTorch) or OUT (an export folder)")
				}
				return runAppview(env, args[0], *repo, *cfgDir, *asJSON)
			}
		},
	}
}

// runAppview builds the view of a Hub repo or of an export folder laid out as publish will
// lay it out, prints it, and ends with exit 3 when the repo breaks a rule of the app.
func runAppview(env Env, ref, repo, cfgDir string, asJSON bool) error {
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
	v := appview.Build(r, appview.Phones(cfg.Export.PhoneClasses), intents)
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(v)
	} else {
		err = v.WriteText(env.Stdout)
	}
	if err != nil {
		return failf(ExitFailed, "appview: write: %w", err)
	}
	if len(v.Problems) > 0 {
		return failf(ExitNotEligible, "appview: %s breaks %d of the app's rules (first: %s)", r.ID, len(v.Problems), v.Problems[0])
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
