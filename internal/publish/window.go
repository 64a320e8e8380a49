package publish

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Window is one exported window as publish sends it: its report, the files of its
// backend folder and the repo-root files (tokenizer, upstream licenses and notices).
type Window struct {
	Repo    string
	Report  *report.Report
	Backend *backend.Backend
	// Folder is the backend folder in the repo ("xnnpack", "mtk/mt6991"); Label the
	// window's label ("4k").
	Folder, Label string
	// ReportPath is the report's path in the repo; ReportJSON its bytes, sent unchanged.
	ReportPath string
	ReportJSON []byte
	// Files are the window's own files in Folder, as the report lists them.
	Files []hub.CommitFile
	// Root are the files every window shares at the repo root.
	Root []hub.CommitFile
	// Skipped are the windows of Folder this run did not build, with why (SetSkipped):
	// the folder's config.json and the card list them.
	Skipped []SkippedWindow

	// seen are the repo files an earlier Build read, by blob id (Window.read).
	seen map[string]seenFile
}

// Find lists the export reports under dir, optionally only those of one backend and one
// window, sorted by path; none is an error, so a workflow that downloaded nothing fails.
func Find(dir, backendName string, window int) ([]string, error) {
	label := ""
	if window > 0 {
		label = family.WindowLabel(window)
	}
	out, err := report.Find(dir, backendName, label)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no export report (export-report-<window>.json in a backend folder) to publish", describe(dir, backendName, window))
	}
	return out, nil
}

func describe(dir, backendName string, window int) string {
	s := dir
	if backendName != "" {
		s += " (backend " + backendName
		if window > 0 {
			s += fmt.Sprintf(", window %d", window)
		}
		s += ")"
	}
	return s
}

// Load reads the report at reportPath, inside the export folder dir, and checks that it
// may be published to repo (empty: the report's output_repo).
func Load(dir, reportPath, repo string) (*Window, error) {
	return LoadContext(context.Background(), dir, reportPath, repo)
}

// LoadContext is Load that stops hashing the window's files once ctx ends.
func LoadContext(ctx context.Context, dir, reportPath, repo string) (*Window, error) {
	root, err := realRoot(dir)
	if err != nil {
		return nil, err
	}
	if err := inside(root, reportPath); err != nil {
		return nil, err
	}
	r, err := report.Read(reportPath)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(reportPath)
	if err != nil {
		return nil, report.FileError("read", reportPath, err)
	}
	rel, err := filepath.Rel(dir, reportPath)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("report %s is not inside the export folder %s", reportPath, dir)
	}
	w := &Window{Repo: repo, Report: r, ReportJSON: raw, ReportPath: filepath.ToSlash(rel)}
	if w.Repo == "" {
		w.Repo = r.OutputRepo
	}
	w.Folder = path.Dir(w.ReportPath)
	w.Label = family.WindowLabel(r.Window.Context)
	if w.Backend = backend.ByName(r.Backend); w.Backend == nil {
		return nil, fmt.Errorf("report %s names backend %q, which this exe-expo does not know (%s)", reportPath, r.Backend, strings.Join(backend.Names(), ", "))
	}
	for _, check := range []func(string) error{w.checkName, w.checkPassed, w.checkRepo, w.checkLicense} {
		if err := check(reportPath); err != nil {
			return nil, err
		}
	}
	if err := w.collect(ctx, root, dir, reportPath); err != nil {
		return nil, err
	}
	if err := checkUnique(append(append([]hub.CommitFile(nil), w.Files...), w.Root...), nil); err != nil {
		return nil, fmt.Errorf("report %s: %w", reportPath, err)
	}
	return w, nil
}

// checkName holds the report's file name to its window, which is how every later publish
// tells the windows of a folder apart.
func (w *Window) checkName(reportPath string) error {
	if w.Folder == "." {
		return fmt.Errorf("report %s is at the root of the export folder; publish takes the reports in backend folders", reportPath)
	}
	if want := report.Name(w.Label); path.Base(w.ReportPath) != want {
		return fmt.Errorf("report %s is of the %d-token window and must be named %s", reportPath, w.Report.Window.Context, want)
	}
	return nil
}

// checkPassed refuses a window whose programs were not checked, or failed their check:
// publishing is where a mistake reaches users.
func (w *Window) checkPassed(reportPath string) error {
	var ptes []string
	for _, f := range w.Report.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			ptes = append(ptes, f.Path)
		}
	}
	if len(ptes) == 0 {
		return fmt.Errorf("report %s lists no .pte file, so there is nothing to publish", reportPath)
	}
	if len(w.Report.StructuralCheck) != len(ptes) {
		return fmt.Errorf("report %s has %d check result(s) for %d .pte file(s): run the export again so that every file is checked before publishing", reportPath, len(w.Report.StructuralCheck), len(ptes))
	}
	for i, res := range w.Report.StructuralCheck {
		if !res.Passed {
			return fmt.Errorf("%s did not pass its check (%s), so it is not published", ptes[i], strings.Join(res.Problems, "; "))
		}
	}
	if b := w.Report.Blockers(); len(b) > 0 {
		return fmt.Errorf("report %s must not be published: %s", reportPath, strings.Join(b, "; "))
	}
	if w.Backend.Smoke && w.Report.Smoke == nil {
		return fmt.Errorf("report %s has no smoke run, and %s files are published only after one passed: run `exe-expo smoke` on the export folder first", reportPath, w.Backend.Title)
	}
	return nil
}

// checkRepo refuses a repo the Hub would refuse or the app would mis-read, naming the
// rule, and a tokenizer in a backend folder. The repo id is checked here, before any
// request: it comes from --repo or from the report, a file anyone could have edited.
func (w *Window) checkRepo(reportPath string) error {
	if err := model.CheckID("output repo", w.Repo); err != nil {
		return fmt.Errorf("report %s: %w", reportPath, err)
	}
	for _, f := range w.Report.Files {
		if path.Dir(f.Path) != w.Folder {
			return fmt.Errorf("report %s lists %s, which is outside its folder %s", reportPath, f.Path, w.Folder)
		}
		if isTokenizer(f.Path) {
			return fmt.Errorf("report %s lists %s: tokenizer files must stay at the repo root", reportPath, f.Path)
		}
		if isGenerated(f.Path) || isReport(f.Path) {
			return fmt.Errorf("report %s lists %s, a file publish writes itself", reportPath, f.Path)
		}
		if !strings.HasSuffix(f.Path, ".pte") {
			continue
		}
		if problems := recipe.AppRules(w.Repo, f.Path, w.Backend.AppName); len(problems) > 0 {
			return fmt.Errorf("%s in repo %s breaks the naming rules of %s: %s", f.Path, w.Repo, family.TheApp, strings.Join(problems, "; "))
		}
	}
	return nil
}

// collect lists the window's files (each the one its report hashed, inside the export
// folder, and no tokenizer beside them) and the root files every window shares.
func (w *Window) collect(ctx context.Context, root, dir, reportPath string) error {
	local := filepath.Join(dir, filepath.FromSlash(w.Folder))
	entries, err := os.ReadDir(local)
	if err != nil {
		return report.FileError("list", local, err)
	}
	for _, e := range entries {
		if isTokenizer(e.Name()) {
			return fmt.Errorf("%s holds %s: tokenizer files must stay at the repo root", local, e.Name())
		}
	}
	for _, f := range w.Report.Files {
		cf, err := verified(ctx, root, filepath.Join(dir, filepath.FromSlash(f.Path)), f.Path, f, reportPath)
		if err != nil {
			return err
		}
		w.Files = append(w.Files, cf)
	}
	w.Files = append(w.Files, hub.CommitFile{PathInRepo: w.ReportPath, Content: w.ReportJSON})
	return w.collectRoot(ctx, root, dir, reportPath)
}

func checkSize(p string, want int64, reportPath string) error {
	st, err := os.Stat(p)
	if err != nil {
		return report.FileError("read", p, err)
	}
	if st.Size() != want {
		return fmt.Errorf("%s has %d bytes and report %s says %d: the folder is not what was exported", p, st.Size(), reportPath, want)
	}
	return nil
}

// collectRoot adds the tokenizer and the upstream license files the report names, each the
// one the report hashed (root_files).
func (w *Window) collectRoot(ctx context.Context, root, dir, reportPath string) error {
	names := append([]string(nil), w.Report.Source.LicenseFiles...)
	if w.Report.Tokenizer != "" {
		names = append(names, w.Report.Tokenizer)
	}
	recorded := map[string]report.File{}
	for _, f := range w.Report.RootFiles {
		recorded[f.Path] = f
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 && names[i-1] == n {
			continue
		}
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) {
			return fmt.Errorf("report %s names the root file %q, which is not a plain file name", reportPath, n)
		}
		if isGenerated(n) || isReport(n) {
			return fmt.Errorf("report %s names the root file %s, a file publish writes itself", reportPath, n)
		}
		rec, ok := recorded[n]
		if !ok {
			return fmt.Errorf("report %s records no size and sha256 for the root file %s (root_files): export the window again with this exe-expo", reportPath, n)
		}
		cf, err := verified(ctx, root, filepath.Join(dir, n), n, rec, reportPath)
		if err != nil {
			return err
		}
		w.Root = append(w.Root, cf)
	}
	return nil
}
