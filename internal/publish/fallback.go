package publish

import (
	"fmt"
	"path"
	"strings"
)

// fallbackNote says, for every window published in fp32 because its quantized file was
// refused, which file it replaces and why: a reader who sees a 4x larger file learns it is
// deliberate, and what the quantized one got wrong. Empty when no window fell back.
func fallbackNote(rs []placed) string {
	var lines []string
	for _, p := range rs {
		r := p.Report
		if r.Fallback == nil {
			continue
		}
		file := ""
		for _, f := range r.Files {
			if strings.HasSuffix(f.Path, ".pte") {
				file = fmt.Sprintf(" (`%s`)", f.Path)
				break
			}
		}
		q := r.Fallback.QMode
		if q == "" {
			q = "quantized"
		}
		lines = append(lines, fmt.Sprintf("- %s at %s tokens is fp32%s: its %s file `%s` failed the checks before publishing (%s), so the unquantized file is published in its place.",
			title(r), thousands(int64(r.Window.Context)), file, q, path.Base(r.Fallback.Replaces), strings.TrimSuffix(r.Fallback.Reason, ".")))
	}
	if len(lines) == 0 {
		return ""
	}
	return "Windows published in fp32 instead of their quantized file:\n\n" + strings.Join(lines, "\n") + "\n"
}
