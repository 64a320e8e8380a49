package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// SkippedWindow is a window of a folder that was not built, and why: the plan's reason
// (no runner holds its memory, its export would pass the job limit) or the export's. The
// folder's config.json lists them (`skipped`) and the card shows them, so a user reading
// the repo learns why a window is missing rather than guessing.
type SkippedWindow struct {
	Context int    `json:"context"`
	Reason  string `json:"reason"`
}

// SetSkipped keeps, of the run's skipped windows, those of this window's folder: for a
// backend with chips, the ones on its chip; otherwise the ones without a chip.
func (w *Window) SetSkipped(all []result.Skipped) {
	w.Skipped = nil
	chip := ""
	if w.Report.TargetName != "" {
		chip = w.Report.Target
	}
	for _, s := range all {
		if strings.EqualFold(s.SoC, chip) {
			w.Skipped = append(w.Skipped, SkippedWindow{Context: s.Window, Reason: s.Reason})
		}
	}
}

// mergeSkipped is a folder's skipped windows after this publish: this run's, then the
// earlier ones it says nothing of, less every window the folder now holds a file for.
func mergeSkipped(old, run []SkippedWindow, folder []placed) []SkippedWindow {
	built := map[int]bool{}
	for _, p := range folder {
		built[p.Report.Window.Context] = true
	}
	seen := map[int]bool{}
	var out []SkippedWindow
	for _, s := range append(append([]SkippedWindow(nil), run...), old...) {
		if built[s.Context] || seen[s.Context] {
			continue
		}
		seen[s.Context] = true
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Context < out[j].Context })
	return out
}

// skippedIn reads the skipped windows a published folder config.json lists; a config
// without any (older than the field) lists none.
func (w *Window) skippedIn(ctx context.Context, c *hub.Client, head string, s hub.Sibling) ([]SkippedWindow, error) {
	b, err := w.read(ctx, c, head, s)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Skipped []SkippedWindow `json:"skipped"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %s is not a config.json exe-expo can read: %w", w.Repo, s.Path, err)
	}
	return cfg.Skipped, nil
}

// isFolderConfig says whether a repo path is a backend folder's config.json.
func isFolderConfig(p string) bool {
	return path.Base(p) == "config.json" && path.Dir(p) != "."
}

// notBuilt writes the card's list of the windows no folder holds, with the reasons; none
// when every window planned was built.
func notBuilt(b *strings.Builder, skipped map[string][]SkippedWindow) {
	folders := make([]string, 0, len(skipped))
	for f, list := range skipped {
		if len(list) > 0 {
			folders = append(folders, f)
		}
	}
	if len(folders) == 0 {
		return
	}
	sort.Strings(folders)
	b.WriteString("### Windows not built\n\n")
	for _, f := range folders {
		for _, s := range skipped[f] {
			fmt.Fprintf(b, "- `%s/` %s: %s\n", f, family.WindowLabel(s.Context), s.Reason)
		}
	}
	b.WriteString("\n")
}
