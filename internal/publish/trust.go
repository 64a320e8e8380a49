package publish

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// The export folder is whatever a workflow downloaded or a user pointed publish at: it is
// trusted only as far as its own tree, and every file publish sends is the one its report
// hashed.

// generated are the repo files publish writes itself; a report that names one would have
// it sent twice or overwrite what publish builds.
var generated = map[string]bool{"config.json": true, "readme.md": true, ".gitattributes": true}

// isGenerated says whether a repo path is one publish writes itself.
func isGenerated(p string) bool { return generated[strings.ToLower(path.Base(p))] }

// realRoot is dir with every link resolved, the tree publish may read from.
func realRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", report.FileError("resolve", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", report.FileError("resolve", dir, err)
	}
	return root, nil
}

// inside refuses p unless it resolves, through every link, to a regular file within root.
func inside(root, p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		real, err = filepath.Abs(real) // root is absolute; a relative path resolves relative
	}
	if err != nil {
		return report.FileError("resolve", p, err)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s resolves to %s, outside the export folder %s: publish sends only files of that folder", p, real, root)
	}
	st, err := os.Stat(real)
	if err != nil {
		return report.FileError("read", p, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", p, st.Mode().Type())
	}
	return nil
}

// verified checks that the file at p, inside root, is the one the report recorded (size
// and sha256), and returns it as a commit file for pathInRepo.
func verified(ctx context.Context, root, p, pathInRepo string, want report.File, reportPath string) (hub.CommitFile, error) {
	if err := inside(root, p); err != nil {
		return hub.CommitFile{}, err
	}
	if err := checkSize(p, want.Bytes, reportPath); err != nil {
		return hub.CommitFile{}, err
	}
	d, err := fileutil.HashContext(ctx, p)
	if err != nil {
		return hub.CommitFile{}, err
	}
	if !strings.EqualFold(d.SHA256, want.SHA256) {
		return hub.CommitFile{}, fmt.Errorf("%s has sha256 %s and report %s says %s: the file changed after the export", p, d.SHA256, reportPath, want.SHA256)
	}
	return hub.CommitFile{PathInRepo: pathInRepo, LocalPath: p, Size: d.Bytes, SHA256: d.SHA256}, nil
}

// checkLicense refuses, before the repo is created, a source that names no license (the
// card publishes the files "distributed under the same terms" as the source, so it needs
// terms to name) and license fields the Hub would reject or that would rewrite the card's
// front matter.
func (w *Window) checkLicense(reportPath string) error {
	l := w.Report.Source.License
	if l.License == "" && l.LicenseName == "" {
		return fmt.Errorf("report %s: the source model %s names no license in its model card (README.md front matter: license, or license_name); "+
			"the published files are distributed under the source's own terms, so a source without a license cannot be published: "+
			"give the license in the source's model card and export again", reportPath, w.Report.Source.ID)
	}
	if err := hub.CheckLicense(l.License, l.LicenseName, l.LicenseLink); err != nil {
		return fmt.Errorf("report %s: the source's %w", reportPath, err)
	}
	return nil
}

// CheckWindow refuses a window that is not positive or not one the configuration gives
// the backend: the folder's config.json and the card list windows by their labels.
func (w *Window) CheckWindow(cfg *config.Config) error {
	n := w.Report.Window.Context
	if n <= 0 {
		return fmt.Errorf("report %s has window %d; a window is a positive number of tokens", w.ReportPath, n)
	}
	ws := configuredWindows(cfg, w.Backend)
	if !slices.Contains(ws, n) {
		return fmt.Errorf("report %s has window %d, which is not one of %s's configured windows (%s)", w.ReportPath, n, w.Backend.Name, joinInts(ws))
	}
	return nil
}

// configuredWindows are the backend's windows: the tiers and extra windows, and the window
// a static-graph backend is fixed at.
func configuredWindows(cfg *config.Config, b *backend.Backend) []int {
	ws := b.Windows(cfg)
	if b.Gate.Fixed != nil {
		if n, _ := b.Gate.Fixed(cfg); n > 0 && !slices.Contains(ws, n) {
			ws = append(ws, n)
			slices.Sort(ws)
		}
	}
	return ws
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// checkUnique refuses a commit that would carry a path twice, or add and delete one path.
func checkUnique(add []hub.CommitFile, del []string) error {
	seen := map[string]bool{}
	for _, f := range add {
		if seen[f.PathInRepo] {
			return fmt.Errorf("the commit would carry %s twice", f.PathInRepo)
		}
		seen[f.PathInRepo] = true
	}
	for _, d := range del {
		if seen[d] {
			return fmt.Errorf("the commit would both send and delete %s", d)
		}
	}
	return nil
}
