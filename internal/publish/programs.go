package publish

import (
	"slices"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// programs are what the app's pre-load probe reads of the window's .pte files (methods and
// delegate ids), from the report's structural check, which read each file at export; publish
// sends only files whose sha256 is the report's, so they are these files. A report that
// recorded none (an export before the check listed them) leaves the facts unknown, and
// the probe's rules are not applied to it.
func (w *Window) programs() map[string]appview.Program {
	var ptes []string
	for _, f := range w.Report.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			ptes = append(ptes, f.Path)
		}
	}
	out := map[string]appview.Program{}
	if len(w.Report.StructuralCheck) != len(ptes) {
		return out
	}
	for i, p := range ptes {
		c := w.Report.StructuralCheck[i]
		if c.Methods == nil {
			continue
		}
		var ds []string
		for _, ids := range c.Delegates {
			ds = append(ds, ids...)
		}
		out[p] = appview.Program{Methods: c.Methods, Delegates: distinct(ds)}
	}
	return out
}

// readPrograms replaces the report's facts with the files' own where pkg/pte reads them, as
// inspect does: an export folder is read as the app's probe would read it. A file pkg/pte
// cannot read is one the probe refuses only where the report says the export read it (so
// it changed since); a report without facts is a stand-in whose bytes are no program.
func readPrograms(files map[string]string, known map[string]appview.Program) {
	for repoPath, local := range files {
		prog, err := pte.OpenFile(local)
		if err != nil {
			if _, ok := known[repoPath]; ok {
				known[repoPath] = appview.Program{Unreadable: err.Error()}
			}
			continue
		}
		var ds []string
		for i := range prog.Methods {
			ds = append(ds, prog.Methods[i].Backends()...)
		}
		known[repoPath] = appview.Program{Methods: prog.MethodNames(), Delegates: distinct(ds)}
	}
}

func distinct(s []string) []string {
	out := []string{}
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
