package publish

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// Text is the commit a dry run would make, for a person to read before publishing: the
// files and their sizes, what is deleted, and the model card's diff.
func (p *Plan) Text() string {
	var b strings.Builder
	on := "a new repo"
	if p.Head != "" {
		on = "revision " + short(p.Head)
	}
	fmt.Fprintf(&b, "would commit %q to %s on %s:\n", p.Summary, p.Repo, on)
	for _, f := range p.Add {
		size := f.Size
		if f.Content != nil {
			size = int64(len(f.Content))
		}
		fmt.Fprintf(&b, "  add    %s (%s, %s bytes)\n", f.PathInRepo, sizing.GB(size), thousands(size))
	}
	for _, d := range p.Delete {
		fmt.Fprintf(&b, "  delete %s\n", d)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	var old []string
	if p.OldCard != "" {
		old = difflib.SplitLines(p.OldCard)
	}
	diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: old, B: difflib.SplitLines(p.Card),
		FromFile: "README.md (on the Hub)", ToFile: "README.md (rebuilt)", Context: 1,
	})
	if diff == "" {
		b.WriteString("the model card is unchanged\n")
	} else {
		b.WriteString(diff)
	}
	return b.String()
}
