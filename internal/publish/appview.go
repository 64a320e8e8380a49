package publish

import (
	"context"
	"fmt"
	"maps"
	"path"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Layout is the repo the export folder dir becomes once every window in it is published
// to repo ("" : each report's output_repo), as the app will see it: every file publish
// sends at the path it sends it to, each backend folder's config.json as publish builds
// it, and what exe-expo built each .pte as. It loads every window as publish does, so a
// window publish would refuse is refused here too, with the same sentence. Only the
// folder's own windows are laid out: a repo that already holds others on the Hub is that
// repo plus these.
func Layout(ctx context.Context, dir, repo string) (appview.Repo, map[string]appview.Intent, error) {
	paths, err := Find(dir, "", 0)
	if err != nil {
		return appview.Repo{}, nil, err
	}
	var ws []*Window
	for _, p := range paths {
		w, err := LoadContext(ctx, dir, p, repo)
		if err != nil {
			return appview.Repo{}, nil, err
		}
		if len(ws) > 0 && w.Repo != ws[0].Repo {
			return appview.Repo{}, nil, fmt.Errorf("%s is for %s and %s for %s: lay out one repo at a time (--repo)", ws[0].ReportPath, ws[0].Repo, w.ReportPath, w.Repo)
		}
		ws = append(ws, w)
	}
	return layoutOf(ws)
}

// layoutOf lays windows out as one repo; each is known to be for the same repo.
func layoutOf(ws []*Window) (appview.Repo, map[string]appview.Intent, error) {
	out := appview.Repo{ID: ws[0].Repo, Configs: map[string][]byte{}, Programs: map[string]appview.Program{}}
	intents := map[string]appview.Intent{}
	files := map[string]int64{}
	local := map[string]string{}
	folders := map[string][]placed{}
	for _, w := range ws {
		for _, f := range append(append([]hub.CommitFile(nil), w.Files...), w.Root...) {
			files[f.PathInRepo] = max(f.Size, int64(len(f.Content)))
			if strings.HasSuffix(f.PathInRepo, ".pte") && f.LocalPath != "" {
				local[f.PathInRepo] = f.LocalPath
			}
		}
		maps.Copy(out.Programs, w.programs())
		folders[w.Folder] = append(folders[w.Folder], placed{Path: w.ReportPath, Report: w.Report})
		w.addIntents(intents)
	}
	for folder, rs := range folders {
		cfg, err := buildConfig(rs)
		if err != nil {
			return appview.Repo{}, nil, fmt.Errorf("lay out %s: %w", folder, err)
		}
		out.Configs[folder] = cfg
		files[path.Join(folder, "config.json")] = int64(len(cfg))
	}
	readPrograms(local, out.Programs)
	for p, size := range files {
		out.Files = append(out.Files, appview.File{Path: p, Size: size})
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out, intents, nil
}

// addIntents records in intents what exe-expo built each of the window's .pte files for:
// its backend's app name and window, chunked when the window is more than one file. It
// returns those files in the report's order.
func (w *Window) addIntents(intents map[string]appview.Intent) []string {
	var ptes []string
	for _, f := range w.Report.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			ptes = append(ptes, f.Path)
		}
	}
	for _, p := range ptes {
		intents[p] = appview.Intent{Backend: w.Backend.AppName, Window: w.Report.Window.Context, Chunked: len(ptes) > 1}
	}
	return ptes
}

// appCheck holds the repo as the commit p leaves it (siblings are the repo at p's head) to
// the app's rules, for this window's files: a file the app would never list (pushed past
// the 40 smallest by the repo's other files), read as another backend or no family, give
// the wrong window or pair with the wrong tokenizer is refused, naming the rule and the
// fix. What it returns are the warnings: the window's files the app offers a phone class
// that cannot hold their KV cache.
func (w *Window) appCheck(siblings []hub.Sibling, p *Plan, cfg []byte) ([]string, error) {
	gone := map[string]bool{}
	for _, d := range p.Delete {
		gone[d] = true
	}
	files := map[string]int64{}
	for _, s := range siblings {
		if gone[s.Path] {
			continue
		}
		files[s.Path] = s.Size
		if s.LFS != nil {
			files[s.Path] = s.LFS.Size
		}
	}
	for _, f := range p.Add {
		files[f.PathInRepo] = max(f.Size, int64(len(f.Content)))
	}
	repo := appview.Repo{ID: w.Repo, Configs: map[string][]byte{w.Folder: cfg}, Programs: w.programs()}
	for path, size := range files {
		repo.Files = append(repo.Files, appview.File{Path: path, Size: size})
	}
	intents := map[string]appview.Intent{}
	ptes := w.addIntents(intents)
	v := appview.Build(repo, appview.Phones(w.Report.Window.PhoneClasses), intents)
	var broken []string
	for _, pr := range v.Problems {
		if _, ours := intents[pr.File]; ours || pr.File == "" {
			broken = append(broken, pr.String())
		}
	}
	if len(broken) > 0 {
		return nil, fmt.Errorf("publish %s %s to %s: %s would not be read right by %s: %s",
			w.Folder, w.Label, w.Repo, strings.Join(ptes, ", "), family.TheApp, strings.Join(broken, "; "))
	}
	var warn []string
	for _, s := range v.Warnings {
		if _, ours := intents[s[:strings.Index(s, ":")]]; ours && !strings.Contains(s, "shows no window") {
			warn = append(warn, s)
		}
	}
	esWarn, err := w.execuServeCheck(repo, intents, ptes)
	return append(warn, esWarn...), err
}
