package publish

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// Summary is the window's step summary in Markdown (the reference's publish summary): what
// was published where, and what the export cost the host, so a reader of the run needs no
// report file to judge it.
func Summary(w *Window, res *Result) string {
	r := w.Report
	var b strings.Builder
	head := title(r)
	if t := target(r); t != anyTarget {
		head += " " + t
	}
	fmt.Fprintf(&b, "### %s: %s\n\n", head, w.Repo)
	switch {
	case res == nil:
	case res.NoOp:
		b.WriteString("Already published: the repo holds this window unchanged, so no commit was made.\n\n")
	case res.Recovered:
		b.WriteString("Committed: the Hub's answer was lost, and a re-read found the window in place.\n\n")
	default:
		fmt.Fprintf(&b, "Commit: %s\n\n", res.URL)
	}
	b.WriteString("| | |\n|---|---|\n")
	for _, row := range summaryRows(r) {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	return b.String()
}

func summaryRows(r *report.Report) [][2]string {
	var files []string
	var total int64
	for _, f := range r.Files {
		files = append(files, fmt.Sprintf("`%s` (%s)", f.Path, sizing.GB(f.Bytes)))
		total += f.Bytes
	}
	rows := [][2]string{
		{"Source", fmt.Sprintf("[%s](%s%s) at `%s`", r.Source.ID, hubURL, r.Source.ID, short(r.Source.SHA))},
		{"Family / variant", r.Source.Family + " / " + r.Source.Variant},
		{"Parameters", thousands(r.Source.TotalParams)},
		{"Window", fmt.Sprintf("%s tokens (%s)", thousands(int64(r.Window.Context)), r.Window.Reason)},
		{"Files", strings.Join(files, "<br>") + "<br>total " + sizing.GB(total)},
		{"Peak RSS export", sizing.GiB(r.Host.PeakRSSExportBytes)},
		{"Peak swap in use", sizing.GiB(r.Host.PeakSwapUsedBytes)},
		{"Peak RAM + swap in use", fmt.Sprintf("%s (at %s)", sizing.GiB(r.Host.PeakInUseBytes), orUnknown(r.Host.PeakInUseAt))},
		{"CPU", fmt.Sprintf("%s, %d CPUs", orUnknown(r.Host.CPUModel), r.Host.NProc)},
		{"Export time", fmt.Sprintf("%.1f s (total %.1f s)", r.Host.ExportSeconds, r.Host.TotalSeconds)},
	}
	if e := r.Estimates; e.PTEBytesEstimate > 0 {
		rows = append(rows, [2]string{".pte estimate vs actual", sizing.GB(e.PTEBytesEstimate) + " vs " + sizing.GB(e.PTEBytesActual)})
	}
	if e := r.Estimates; e.ExportPeakBytesEstimate > 0 {
		rows = append(rows, [2]string{"Export peak estimate", sizing.GiB(e.ExportPeakBytesEstimate)})
	}
	var checks []string
	for i := range r.StructuralCheck {
		checks = append(checks, verdict(r, i))
	}
	rows = append(rows, [2]string{"Check", strings.Join(checks, "<br>")})
	return rows
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
