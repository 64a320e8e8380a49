package publish

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/appview"
)

// execuServeCheck holds the window's folder, as the commit leaves it, to ExecuServe's rules
// (appview.BuildExecuServe; docs/research/execuserve-rules.md): a folder or window of ours
// it would drop is refused, naming the rule. A MediaTek window whose XNNPACK twin is not in
// the repo yet is a warning, not a refusal: the twin may be published after it, and only
// the whole repo (exe-expo appview) can say it never is.
func (w *Window) execuServeCheck(repo appview.Repo, intents map[string]appview.Intent, ptes []string) ([]string, error) {
	v := appview.BuildExecuServe(repo, intents)
	var broken, warn []string
	for _, pr := range v.Problems {
		if _, ours := intents[pr.File]; !ours {
			continue
		}
		if pr.Rule == appview.RuleESTwin {
			warn = append(warn, pr.File+": "+pr.Why+" (unless it is published too)")
			continue
		}
		broken = append(broken, pr.String())
	}
	if len(broken) > 0 {
		return nil, fmt.Errorf("publish %s %s to %s: ExecuServe would drop %s: %s",
			w.Folder, w.Label, w.Repo, strings.Join(ptes, ", "), strings.Join(broken, "; "))
	}
	for _, s := range v.Warnings {
		if strings.HasPrefix(s, w.Folder+"/") || strings.HasPrefix(s, w.Folder+":") {
			warn = append(warn, "ExecuServe: "+s)
		}
	}
	return warn, nil
}
