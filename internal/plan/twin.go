package plan

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
)

// TwinRule is where the rule that a MediaTek window needs an XNNPACK twin is recorded.
const TwinRule = "docs/research/execuserve-rules.md, rule E10"

// twins leaves out each window of a backend that decodes on another (backend.DecodesOn)
// when that backend builds no window of the same size: ExecuServe drops such a window, and
// the app offers no NeuroPilot file, so its export would cost a job for files no consumer
// lists. The row's Skip says so; the backend's phone table and cost are recomputed.
func twins(cfg *config.Config, backends []BackendPlan) {
	built := map[string]map[int]bool{}
	for _, bp := range backends {
		built[bp.Backend] = map[int]bool{}
		for _, r := range bp.Rows {
			if bp.OK && r.Skip == "" {
				built[bp.Backend][r.Window] = true
			}
		}
	}
	for i := range backends {
		bp := &backends[i]
		b := backend.ByName(bp.Backend)
		if !bp.OK || b == nil || b.DecodesOn == "" {
			continue
		}
		title := b.DecodesOn
		if d := backend.ByName(b.DecodesOn); d != nil {
			title = d.Title
		}
		changed := false
		for j := range bp.Rows {
			r := &bp.Rows[j]
			if r.Skip != "" || built[b.DecodesOn][r.Window] {
				continue
			}
			r.Skip = fmt.Sprintf("left out: ExecuServe runs a %s window only beside the %s file of the same window, which decodes for it (%s), and no %s %s window is built",
				fileTitle(bp), title, TwinRule, title, family.WindowLabel(r.Window))
			changed = true
		}
		if changed {
			bp.tally(cfg)
		}
	}
}
