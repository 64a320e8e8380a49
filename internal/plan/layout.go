package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/family"
)

// AppListRule is where the app's list of a repo's .pte files is recorded: it sorts them by
// size and keeps the first appview.MaxListed before it filters by backend, so a file past
// them is never seen, whatever its backend.
const AppListRule = "docs/research/app-rules.md, rule 2"

// Layout is the repo's .pte files as the plan lays them out, held against the app's list.
// Every backend publishes into one repo, and the openweights app keeps only the Limit
// smallest .pte files of a repo before it looks at their backend; so when every window of
// every backend would put more files there, the plan leaves whole windows out, those the
// app runs on the fewest phones first, and the app still lists every file it runs.
type Layout struct {
	// Files is how many .pte files the windows built put in the repo (every chunk, for
	// every chip); Planned is how many they came to before any window was left out.
	Files   int `json:"pte_files"`
	Planned int `json:"planned_pte_files"`
	// Limit is how many .pte files of a repo the app lists (appview.MaxListed).
	Limit int `json:"app_lists"`
	// LeftOut are the windows left out of the repo to hold Files within Limit, in the order
	// they were shed; each one's row says why in its Skip.
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// LeftOut is one window left out of the repo for the app's list.
type LeftOut struct {
	Backend string `json:"backend"`
	Window  int    `json:"window"`
	// Files is how many .pte files the window would have put in the repo.
	Files int `json:"pte_files"`
}

// reach is how widely the app runs a backend's files; the repo sheds the narrowest first.
type reach int

const (
	// runsNowhere: the app links no delegate for it (QNN); the files are published for
	// other runtimes and, in the app's list, only take the place of files it runs.
	runsNowhere reach = iota
	// runsOnOneChip: it runs only on a phone whose SoC is the file's chip folder (MediaTek
	// NeuroPilot, through the app's staged NPU path and ExecuServe).
	runsOnOneChip
	// runsOnSome: the app runs it only on phones that meet a condition (Vulkan 1.1).
	runsOnSome
	// runsAnywhere: the app runs it on any phone (XNNPACK, a name that says nothing).
	runsAnywhere
)

// reachOf is where the app runs bp's files (docs/research/app-rules.md, rule 3), read from
// appview's rules with the path a file of bp's first chip would have.
func reachOf(bp *BackendPlan) reach {
	name := string(appview.Unknown)
	if b := backend.ByName(bp.Backend); b != nil && b.AppName != "" {
		name = b.AppName
	}
	app := appview.Backend(name)
	path := "model.pte"
	if len(bp.Targets) > 0 {
		path = strings.ToLower(bp.Targets[0]) + "/" + path
	}
	switch where, _ := appview.Runs(app, path); {
	case app == appview.NeuroPilot && len(bp.Targets) > 0:
		// Discover no longer offers NeuroPilot files, but the app's own NPU path still runs
		// a chip's chunks staged beside a CPU file on that chip, and ExecuServe lists them
		// there (docs/research/app-rules.md rule 3, execuserve-rules.md E10).
		return runsOnOneChip
	case where == "":
		return runsNowhere
	case len(bp.Targets) > 0:
		return runsOnOneChip
	case app == appview.XNNPACK || app == appview.Unknown:
		return runsAnywhere
	}
	return runsOnSome
}

// files is how many .pte files one window of bp puts in the repo: one per chunk (MediaTek
// cuts a window into several programs), for each chip.
func (bp *BackendPlan) files(r Row) int {
	return max(len(r.Chunks), 1) * max(len(bp.Targets), 1)
}

// candidate is one built window that may be left out.
type candidate struct {
	bp    *BackendPlan
	row   int
	reach reach
	files int
}

// LayOut counts the .pte files the windows built of backends put in the one repo they
// share and, past limit, leaves whole windows out until the rest fit: first those of
// backends the app never runs (QNN), then chip-locked ones it runs on one chip's phones
// (MediaTek), then those it runs on some phones (Vulkan), and those any phone runs
// (XNNPACK) last; within each, the longest window first (the one the fewest phones hold).
// A window left out gets its row's Skip, which says so, as a window no runner can build
// does. The fp32 fallback rows replace a window's file and add none, so they do not count.
// Phones and costs are the caller's to recompute for the backends that lost a window.
func LayOut(backends []BackendPlan, limit int) Layout {
	var cands []candidate
	l := Layout{Limit: limit}
	for i := range backends {
		bp := &backends[i]
		if !bp.OK {
			continue
		}
		rc := reachOf(bp)
		for j, r := range bp.Rows {
			if r.Skip == "" {
				cands = append(cands, candidate{bp: bp, row: j, reach: rc, files: bp.files(r)})
				l.Planned += bp.files(r)
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.reach, b.reach), -cmp.Compare(a.bp.Rows[a.row].Window, b.bp.Rows[b.row].Window),
			cmp.Compare(a.bp.Backend, b.bp.Backend))
	})
	l.Files = l.Planned
	for _, c := range cands {
		if l.Files <= limit {
			break
		}
		row := &c.bp.Rows[c.row]
		row.Skip = leftOutReason(c, l.Planned, limit)
		l.Files -= c.files
		l.LeftOut = append(l.LeftOut, LeftOut{Backend: c.bp.Backend, Window: row.Window, Files: c.files})
	}
	return l
}

// leftOutReason is a left-out window's Skip: the rule, the numbers, and why this window.
func leftOutReason(c candidate, planned, limit int) string {
	why := map[reach]string{
		runsNowhere:   "which the app never runs: such files go first",
		runsOnOneChip: "which run only on one chip's phones (the app's staged NPU path, ExecuServe): such files go before those every phone can run",
		runsOnSome:    "which the app runs only on some phones: such files go before those any phone runs",
		runsAnywhere:  "which any phone runs: with every other backend's windows gone the rest still do not fit",
	}[c.reach]
	return fmt.Sprintf("left out of the repo: the app lists only the %d smallest .pte files of a repo (%s) and the windows planned would put %d there; "+
		"this window is %s of %s, %s (the longest window first)", limit, AppListRule, planned, pteFiles(c.files), fileTitle(c.bp), why)
}

// fileTitle names a backend's files in a sentence: its title without the part in brackets.
func fileTitle(bp *BackendPlan) string {
	t, _, _ := strings.Cut(bp.Title, " (")
	if t == "" {
		return bp.Backend
	}
	return t
}

// Line is the layout in one sentence, for the plan's text and the step summary.
func (l *Layout) Line() string {
	rule := fmt.Sprintf("the %d smallest the app lists (%s)", l.Limit, AppListRule)
	if len(l.LeftOut) == 0 {
		return fmt.Sprintf("%s in the repo, within %s", pteFiles(l.Files), rule)
	}
	return fmt.Sprintf("%d .pte files planned, over %s; left out, the files the app runs on the fewest phones first: %s; the repo holds %d, so the app lists every file it runs",
		l.Planned, rule, l.leftOutList(), l.Files)
}

// leftOutList words the windows left out per backend, in the order they were shed:
// "Qualcomm QNN (HTP) 4k, 2k (4 .pte files), MediaTek NeuroPilot (APU) 16k, 8k (16 .pte files)".
func (l *Layout) leftOutList() string {
	var order []string
	labels, files := map[string][]string{}, map[string]int{}
	for _, o := range l.LeftOut {
		if _, seen := labels[o.Backend]; !seen {
			order = append(order, o.Backend)
		}
		labels[o.Backend] = append(labels[o.Backend], family.WindowLabel(o.Window))
		files[o.Backend] += o.Files
	}
	parts := make([]string, 0, len(order))
	for _, name := range order {
		title := name
		if b := backend.ByName(name); b != nil {
			title = b.Title
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", title, strings.Join(labels[name], ", "), pteFiles(files[name])))
	}
	return strings.Join(parts, ", ")
}

// pteFiles words a count of .pte files.
func pteFiles(n int) string {
	if n == 1 {
		return "1 .pte file"
	}
	return fmt.Sprintf("%d .pte files", n)
}
