package publish

import (
	"fmt"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
)

// made is one line per distinct recipe, with the runs that built its files.
func made(b *strings.Builder, rs []placed) {
	type line struct {
		head string
		runs []string
	}
	var out []*line
	idx := map[string]*line{}
	for _, p := range rs {
		r := p.Report
		desc, _ := r.Recipe["description"].(string)
		head := fmt.Sprintf("- %s %s: %s", title(r), target(r), desc)
		l, ok := idx[head]
		if !ok {
			l = &line{head: head}
			idx[head] = l
			out = append(out, l)
		}
		if r.Run != nil && r.Run.URL != "" && !contains(l.runs, r.Run.URL) {
			l.runs = append(l.runs, r.Run.URL)
		}
	}
	b.WriteString("## How it was made\n\n")
	for _, l := range out {
		b.WriteString(l.head)
		if len(l.runs) > 0 {
			links := make([]string, len(l.runs))
			for i, u := range l.runs {
				links[i] = fmt.Sprintf("[run %d](%s)", i+1, u)
			}
			b.WriteString(" Built by " + strings.Join(links, ", ") + ".")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func license(b *strings.Builder, rs []placed) {
	src := rs[0].Report.Source
	terms := src.License.LicenseName
	if terms == "" {
		terms = src.License.License
	}
	b.WriteString("## License\n\n")
	fmt.Fprintf(b, "A quantized derivative of [%s](%s%s), distributed under the same terms (%s).", src.ID, hubURL, src.ID, terms)
	if len(src.LicenseFiles) > 0 {
		names := append([]string(nil), src.LicenseFiles...)
		sort.Strings(names)
		for i, n := range names {
			names[i] = fmt.Sprintf("[`%s`](%s)", n, n)
		}
		b.WriteString(" The upstream license files are included unchanged: " + strings.Join(names, ", ") + ".")
	}
	b.WriteString("\n")
	var names []string
	notes := map[string]string{}
	for _, p := range rs { // rs is sorted by window: the newest toolchain of a backend wins
		bk := backend.ByName(p.Report.Backend)
		if bk == nil || bk.Card.Note == nil {
			continue
		}
		if !contains(names, bk.Name) {
			names = append(names, bk.Name)
		}
		notes[bk.Name] = bk.Card.Note(p.Report.Toolchain)
	}
	for _, n := range names {
		fmt.Fprintf(b, "\n%s\n", notes[n])
	}
}
