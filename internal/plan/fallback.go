package plan

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// SelectFallback is what the fp32 fallback builds for the windows whose quantized file the
// checks refused (a gate result's failed list): each window's fp32 row with the runner
// that builds it, or the window skipped with why, when the fp32 file would not fit the
// phone budget or no runner can build it. A backend without fp32 rows (its files are not
// graded, or its recipe does not quantize) is refused: nothing it builds can fall back.
func (p *Plan) SelectFallback(backendName string, failed []result.Failed) (Selection, error) {
	bp := p.backend(backendName)
	if bp == nil || !bp.OK {
		_, reason := p.Decision(backendName)
		return Selection{}, fmt.Errorf("%s", reason)
	}
	if len(bp.Fallback) == 0 {
		return Selection{}, fmt.Errorf("%s has no fp32 fallback for %s: only a backend whose quantized files the decision gate grades falls back", bp.Title, p.Model)
	}
	rows := map[int]Row{}
	for _, r := range bp.Fallback {
		rows[r.Window] = r
	}
	s := Selection{Windows: []result.Window{}, Skipped: []result.Skipped{}}
	for _, f := range failed {
		row, ok := rows[f.Window]
		if !ok {
			return Selection{}, fmt.Errorf("the failed window %d is not among %s's windows (%s)", f.Window, bp.Title, windowList(bp))
		}
		s.Rows = append(s.Rows, row)
		if why := p.fallbackSkip(row, f); why != "" {
			s.Skipped = append(s.Skipped, result.Skipped{Window: f.Window, SoC: f.SoC, Reason: why})
			continue
		}
		s.Windows = append(s.Windows, result.Window{Window: row.Window, Runner: row.Runner, SwapGiB: row.SwapGiB})
	}
	return s, nil
}

// fallbackSkip says why the fp32 file of a failed window is not built: it would not fit the
// phone budget, or no runner can build it. Both name the quantized file's refusal first, so
// the skipped list says the whole story.
func (p *Plan) fallbackSkip(row Row, f result.Failed) string {
	failed := fmt.Sprintf("its %s file failed the checks (%s)", orQuantized(f.QMode), f.Reason)
	switch {
	case row.Skip != "":
		return fmt.Sprintf("%s and the fp32 fallback cannot be built: %s", failed, row.Skip)
	case !row.FitsPhone:
		return fmt.Sprintf("%s and the fp32 fallback would need %s on the phone, over the %s budget",
			failed, sizing.GB(row.ResidentBytes), sizing.GB(p.PhoneBudgetBytes))
	}
	return ""
}

func orQuantized(qmode string) string {
	if qmode == "" {
		return "quantized"
	}
	return qmode
}
