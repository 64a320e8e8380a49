package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/config"
)

func catalogCommand() Command {
	return Command{
		Name:    "catalog",
		Summary: "print the output org's catalog of published files, check it against the model repos, or rebuild it from them",
		Usage:   "[--check] [--rebuild] [--json] [--config DIR]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			check := fs.Bool("check", false, "compare the catalog with every model repo of the org; exit 2 on any difference")
			rebuild := fs.Bool("rebuild", false, "rebuild the catalog from the org's model repos and commit it (needs HF_TOKEN)")
			asJSON := fs.Bool("json", false, "print the catalog as JSON")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: the embedded config)")
			return func(env Env, args []string) error {
				if len(args) != 0 {
					return failf(ExitFailed, "catalog: takes no arguments, not %q; the org and the catalog repo come from pipeline.yaml's hub section", strings.Join(args, " "))
				}
				if *check && *rebuild {
					return failf(ExitFailed, "catalog: --check compares and --rebuild writes: give one")
				}
				return runCatalog(env, *cfgDir, *check, *rebuild, *asJSON)
			}
		},
	}
}

func runCatalog(env Env, cfgDir string, check, rebuild, asJSON bool) error {
	maskTokens(env)
	cfg, err := config.Load(cfgDir)
	if err != nil {
		return failf(ExitFailed, "catalog: %w", err)
	}
	c := env.Hub
	repo := cfg.Hub.Catalog()
	if rebuild {
		if !c.Authenticated() {
			return failf(ExitFailed, "catalog: --rebuild commits to %s: set HF_TOKEN to a token that can write there", repo)
		}
		cat, err := catalog.Rebuild(env.Ctx, c, cfg.Hub.Org, repo)
		if err == nil {
			_, err = catalog.Write(env.Ctx, c, repo, cat, catalog.Options{})
		}
		if err != nil {
			return failf(ExitFailed, "catalog: rebuild: %w", err)
		}
		fmt.Fprintf(env.Stdout, "catalog %s rebuilt: %d model repo(s)\n", repo, len(cat.Models))
		return nil
	}
	b, err := c.ReadFile(env.Ctx, repo, "main", catalog.File)
	if err != nil {
		return failf(ExitFailed, "catalog: read %s/%s: %w; if it was lost, `exe-expo catalog --rebuild` makes it again from the model repos", repo, catalog.File, err)
	}
	cat, err := catalog.Decode(repo+"/"+catalog.File, b)
	if err != nil {
		return failf(ExitFailed, "catalog: %w", err)
	}
	if check {
		diffs, err := catalog.Check(env.Ctx, c, cat, repo)
		if err != nil {
			return failf(ExitFailed, "catalog: check: %w", err)
		}
		// folders built for another runtime are not a difference: the catalog says truly what
		// they are; they are listed so that a runtime move shows what it will rebuild
		for _, st := range cat.Stale(func(b string) catalog.Runtime { return runtimeFor(cfg, b) }) {
			fmt.Fprintln(env.Stdout, "- "+st.String())
		}
		if len(diffs) > 0 {
			for _, d := range diffs {
				fmt.Fprintln(env.Stdout, "- "+d)
			}
			return failf(ExitFailed, "catalog: %s differs from the model repos in %d place(s); `exe-expo catalog --rebuild` makes it again", repo, len(diffs))
		}
		fmt.Fprintf(env.Stdout, "catalog %s matches the org's %d model repo(s)\n", repo, len(cat.Models))
		return nil
	}
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(cat); err != nil {
			return failf(ExitFailed, "catalog: write: %w", err)
		}
		return nil
	}
	fmt.Fprint(env.Stdout, catalogText(cat))
	return nil
}

// catalogText is one line per folder: repo, folder, runtime, windows.
func catalogText(cat *catalog.Catalog) string {
	var b strings.Builder
	repos := make([]string, 0, len(cat.Models))
	for r := range cat.Models {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	fmt.Fprintf(&b, "Catalog of %s: %d model repo(s)\n", cat.Org, len(repos))
	for _, r := range repos {
		m := cat.Models[r]
		fmt.Fprintf(&b, "\n%s (from %s)\n", r, m.Source)
		folders := make([]string, 0, len(m.Folders))
		for f := range m.Folders {
			folders = append(folders, f)
		}
		sort.Strings(folders)
		for _, f := range folders {
			fo := m.Folders[f]
			var ws []string
			for _, w := range fo.Windows {
				ws = append(ws, fmt.Sprintf("%d", w.Context))
			}
			rt := "ExecuTorch " + fo.Runtime.ExecuTorch
			if fo.Runtime.QAIRT != "" {
				rt += ", QAIRT " + fo.Runtime.QAIRT
			}
			if fo.Runtime.NeuroPilotSDK != "" {
				rt += ", NeuroPilot " + fo.Runtime.NeuroPilotSDK
			}
			if fo.LoadsOn.From != "" {
				rt += " (loads on " + fo.LoadsOn.String() + ")"
			}
			fmt.Fprintf(&b, "  %-12s %s; windows %s\n", f, rt, strings.Join(ws, ", "))
		}
	}
	return b.String()
}
