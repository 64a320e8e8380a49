package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Find lists the export reports below dir, sorted: export-report-<label>.json in a backend
// folder at any depth (xnnpack/, qnn/sm8750/, mtk/mt6991/), never at dir itself. backend
// keeps only reports of that backend, as each report names it (folders are not backend
// names); label keeps only that window ("4k"). Empty means any. Finding none is not an
// error here: each caller says what it looked for.
func Find(dir, backend, label string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, FileError("read", dir, err)
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !strings.HasPrefix(name, "export-report") || !strings.HasSuffix(name, ".json") || filepath.Dir(p) == filepath.Clean(dir) {
			return nil
		}
		if label != "" && name != Name(label) {
			return nil
		}
		if backend != "" {
			r, err := Read(p)
			if err != nil {
				return err
			}
			if r.Backend != backend {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look for export reports in %s: %w", dir, err)
	}
	sort.Strings(out)
	return out, nil
}
