package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// WriteText prints the plan for people: the verdict first, then a table per backend.
func (p *Plan) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	rev := ""
	if p.Revision != "" {
		rev = " at " + p.Revision
	}
	if p.RevisionNote != "" {
		rev += " (" + p.RevisionNote + ")"
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
		ew.printf("Architecture: %d layers (%d attend%s), %d heads, %d KV heads, head_dim %d, hidden %d, vocab %s\n",
			a.Layers, a.AttentionLayers, a.layerKinds(), a.Heads, a.KVHeads, a.HeadDim, a.Dim, family.Commas(a.Vocab))
	}
	if v.Eligible {
		ew.printf("Verdict: eligible for %s\n", strings.Join(backend.Titles(v.Supported()), ", "))
	} else {
		ew.printf("Verdict: not eligible\n")
		for _, r := range v.Reasons {
			ew.printf("  - %s\n", r)
		}
		if len(v.Reasons) == 0 {
			ew.printf("  - no backend can take it (see below)\n")
		}
	}
	for _, n := range v.Notes {
		ew.printf("Note: %s\n", n)
	}
	if p.ArchError != "" {
		ew.printf("No sizing: %s\n", p.ArchError)
	}
	tables := false
	for _, b := range p.Backends {
		ew.printf("\n")
		tables = b.writeText(ew) || tables
	}
	if p.Layout != nil {
		ew.printf("\nRepo layout (every backend): %s\n", p.Layout.Line())
	}
	if p.Jobs > 0 {
		ew.printf("\nExport cost of every window to build above: %s (measured export times and runner prices in pipeline.yaml; a skipped window costs nothing)\n", CostLine(p.Jobs, p.Minutes, p.USD))
	}
	if tables {
		ew.printf("\n%s\n", p.tableKey())
	}
	return ew.err
}

// tableKey is the line under the tables that says what "phone" and "fits phone" mean,
// which settings decide them, and the two units the columns use.
func (p *Plan) tableKey() string {
	return fmt.Sprintf("phone = .pte + KV cache + %s runtime (export.runtime_overhead_bytes), what the handset holds; "+
		"fits phone = phone ≤ %s, the budget in pipeline.yaml's export.device_budget_bytes; "+
		"per phone = the largest window whose phone bytes fit what a handset of that RAM leaves the app, or its vendor's per-process limit where that is lower (export.phone_classes). GB = 10^9 bytes, GiB = 2^30 bytes.",
		sizing.GB(p.PhoneOverheadBytes), sizing.GB(p.PhoneBudgetBytes))
}

// layerKinds says which attending layers slide and which layers keep a fixed state instead
// ("" for a model whose attending layers all span the window).
func (a *ArchSummary) layerKinds() string {
	out := ""
	if a.SlidingLayers > 0 {
		out += fmt.Sprintf(", %d of them over a sliding window of %d", a.SlidingLayers, a.SlidingWindow)
	}
	if a.DeltaNetLayers > 0 {
		out += fmt.Sprintf("; %d DeltaNet layers keep a fixed state", a.DeltaNetLayers)
	}
	return out
}

// writeText prints one backend, reporting whether it printed a table.
func (b BackendPlan) writeText(ew *errWriter) bool {
	if !b.OK && !b.SizedAhead {
		ew.printf("%s: not exported: %s\n", b.Title, b.Reason)
		return false
	}
	if b.SizedAhead {
		ew.printf("%s: %s\n  sized ahead of the export (nothing is built, laid out or costed until then): ", b.Title, b.Reason)
	} else {
		ew.printf("%s: ", b.Title)
	}
	ew.printf("%s", b.Recipe)
	if len(b.Targets) > 0 {
		ew.printf("; every window for each of %s", strings.Join(b.Targets, ", "))
	}
	ew.printf("\n")
	if len(b.Rows) == 0 {
		ew.printf("  (no sizing: the parameter count or architecture is unknown)\n")
		return false
	}
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "window\tKV B/token\tKV total GB\t.pte est. GB\tphone GB\tfits phone\thost need GiB\trunner")
	for _, r := range b.Rows {
		fits := "yes"
		if !r.FitsPhone {
			fits = "no"
		}
		runner := r.Runner
		if r.UsesSwap {
			runner += fmt.Sprintf(" (+%d GiB swap)", r.SwapGiB)
		}
		if r.ExportMinutes > 0 {
			runner += fmt.Sprintf(", ~%d min, $%.2f", r.ExportMinutes, r.ExportUSD)
		}
		if r.Skip != "" {
			runner = "skipped: " + r.Skip
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%.1f\t%s\n", r.Label, family.Commas(r.KVBytesPerToken),
			inGB(r.KVCacheBytes), inGB(r.PTEBytes), inGB(r.ResidentBytes), fits, inGiB(r.HostNeedBytes), runner)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	b.writeFixedCaches(ew)
	if len(b.Phones) > 0 {
		ew.printf("  largest window per phone: %s\n", PhoneLine(b.Phones))
	}
	for _, c := range []string{sizing.KVFP32, sizing.KVInt8} {
		if fits, ok := b.PhonesByCache[c]; ok {
			ew.printf("    every window with an %s KV cache: %s\n", c, PhoneLine(fits))
		}
	}
	if len(b.Fallback) > 0 {
		b.writeFallback(ew)
	}
	if c := b.Calibrate; c != nil && b.Jobs > 0 {
		ew.printf("  calibration: once per chip at %s tokens before the windows' jobs, ~%d min, $%.2f on %s; each window's job loads it\n",
			family.Commas(int64(c.Window)), c.Minutes, c.USD, c.Runner)
	}
	if b.Jobs > 0 {
		ew.printf("  export cost: %s\n", CostLine(b.Jobs, b.Minutes, b.USD))
	}
	return true
}

// writeFixedCaches says what the KV total and the phone hold beyond KV B/token × window:
// the sliding layers' rings and the DeltaNet state, from the first window's row (both are
// the same at every window the tiers hold, which are longer than any sliding window).
func (b BackendPlan) writeFixedCaches(ew *errWriter) {
	r := b.Rows[0]
	if ring := r.KVCacheBytes - r.KVBytesPerToken*int64(r.Window); ring > 0 {
		ew.printf("  KV total also holds the sliding layers' ring caches: %s MB at %s (twice the sliding window's entries each)\n",
			mb(ring), r.Label)
	}
	if r.StateBytes > 0 {
		ew.printf("  phone also holds the DeltaNet layers' fixed state: %s MB at every window (fp32 conv and recurrent state)\n", mb(r.StateBytes))
	}
}

// mb writes bytes in decimal megabytes with two decimals.
func mb(b int64) string { return fmt.Sprintf("%.2f", float64(b)/1e6) }

// PhoneLine is the phone table in one line: "4 GB: none, 6 GB: 4k, 8 GB: 32k, …".
func PhoneLine(fits []config.PhoneFit) string {
	parts := make([]string, 0, len(fits))
	for _, f := range fits {
		w := "none"
		if f.Window > 0 {
			w = family.WindowLabel(f.Window)
		}
		parts = append(parts, fmt.Sprintf("%d GB phone: %s", f.RAMGiB, w))
	}
	return strings.Join(parts, ", ")
}

// inGB and inGiB are the table's two units: decimal GB for what lands on the phone (as
// model cards print file sizes), GiB for host memory (as runners are sized).
func inGB(b int64) float64 { return float64(b) / 1e9 }

func inGiB(b int64) float64 { return float64(b) / (1 << 30) }

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

// CostLine words export jobs, their runner minutes and price.
func CostLine(jobs, minutes int, usd float64) string {
	return fmt.Sprintf("%d job(s), %s runner minutes, $%.2f", jobs, family.Commas(int64(minutes)), usd)
}

// writeFallback prints the fp32 recipe's rows beside the quantized table: what a window
// costs when its quantized file fails the decision gate and fp32 is exported instead.
func (b BackendPlan) writeFallback(ew *errWriter) {
	ew.printf("  fp32 fallback, for a window whose quantized file fails the decision gate (exported when it fits the phone):\n")
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  window\t.pte est. GB\tphone GB\tfits phone\thost need GiB\trunner")
	for _, r := range b.Fallback {
		fits := "yes"
		if !r.FitsPhone {
			fits = "no"
		}
		runner := r.Runner
		if r.Skip != "" {
			runner = "skipped: " + r.Skip
		}
		fmt.Fprintf(tw, "  %s\t%.2f\t%.2f\t%s\t%.1f\t%s\n", r.Label, inGB(r.PTEBytes), inGB(r.ResidentBytes), fits, inGiB(r.HostNeedBytes), runner)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
}
