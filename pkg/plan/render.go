package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// WriteText prints the plan for people: the verdict first, then a table per backend.
func (p *Plan) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	rev := ""
	if p.Revision != "" {
		rev = " at " + p.Revision
	}
	ew.printf("%s%s\n", p.Model, rev)
	ew.printf("Source: %s\n", p.Origin)
	v := p.Verdict
	fam := v.Family
	if fam == "" {
		fam = "no known family"
	}
	ew.printf("Family: %s (%s)", fam, v.Variant)
	if p.Params != nil {
		ew.printf(", %s parameters (%s)", family.Commas(p.Params.Total), p.Params.Source)
	}
	ew.printf("\n")
	if p.Arch != nil {
		a := p.Arch
		ew.printf("Architecture: %d layers (%d attend), %d heads, %d KV heads, head_dim %d, hidden %d, vocab %s\n",
			a.Layers, a.AttentionLayers, a.Heads, a.KVHeads, a.HeadDim, a.Dim, family.Commas(a.Vocab))
	}
	if v.Eligible {
		var names []string
		for _, b := range v.Supported() {
			names = append(names, family.BackendTitle[b])
		}
		ew.printf("Verdict: eligible for %s\n", strings.Join(names, ", "))
	} else {
		ew.printf("Verdict: not eligible\n")
		for _, r := range v.Reasons {
			ew.printf("  - %s\n", r)
		}
		if len(v.Reasons) == 0 {
			ew.printf("  - no backend can take it (see below)\n")
		}
	}
	if p.ArchError != "" {
		ew.printf("No sizing: %s\n", p.ArchError)
	}
	for _, b := range p.Backends {
		ew.printf("\n")
		b.writeText(ew)
	}
	return ew.err
}

func (b BackendPlan) writeText(ew *errWriter) {
	if !b.OK {
		ew.printf("%s: not exported: %s\n", b.Title, b.Reason)
		return
	}
	ew.printf("%s: %s", b.Title, b.Recipe)
	if len(b.Targets) > 0 {
		ew.printf("; every window for each of %s", strings.Join(b.Targets, ", "))
	}
	ew.printf("\n")
	if len(b.Rows) == 0 {
		ew.printf("  (no sizing: the parameter count or architecture is unknown)\n")
		return
	}
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "window\tKV B/token\tKV total\t.pte est.\tphone\tfits phone\thost need\trunner")
	for _, r := range b.Rows {
		fits := "yes"
		if !r.FitsPhone {
			fits = "no"
		}
		runner := r.Runner
		if r.UsesSwap {
			runner += fmt.Sprintf(" (+%d GiB swap)", r.SwapGiB)
		}
		if r.Skip != "" {
			runner = "skipped: " + r.Skip
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Label, family.Commas(r.KVBytesPerToken),
			sizing.GB(r.KVCacheBytes), sizing.GB(r.PTEBytes), sizing.GB(r.ResidentBytes), fits, sizing.GiB(r.HostNeedBytes), runner)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
