package appview

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText prints the view for a person: the repo's reading, one row per .pte in the
// app's size order, one line per phone class per listed file, then the problems publish
// refuses and the warnings it gives.
func (v *View) WriteText(w io.Writer) error {
	var b strings.Builder
	hint := v.SizeHint
	if hint == "" {
		hint = "none (the app's size filter keeps it everywhere)"
	}
	fmt.Fprintf(&b, "%s as the openweights app sees it\n", v.Repo)
	fmt.Fprintf(&b, "size hint: %s; tokenizers: %s\n\n", hint, orNone(strings.Join(v.Tokenizers, ", ")))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tfile\tGB\tbackend\tfamily\twindow\ttokenizer\tlisted")
	for _, e := range v.Files {
		listed := "yes"
		switch {
		case !e.Listed:
			listed = "no: " + e.Dropped
		case e.Refused != "":
			listed = "yes, then [" + RuleOpens + "] " + e.Refused
		}
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\n", e.Rank, e.Path, float64(e.Size)/1e9, e.Backend,
			orNone(e.Family), windowText(e), orNone(e.Tokenizer), listed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.Phones) > 0 {
		b.WriteString("\nper phone (app: the app's fit, file × 2.4 + 450 MiB against 65% of RAM, blind to the window; holds: exe-expo's window-aware resident):\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		head := "file\truns on"
		for _, p := range v.Phones {
			head += "\t" + strconv.Itoa(p.RAMGiB) + " GB"
		}
		fmt.Fprintln(tw, head)
		for _, e := range v.Files {
			if !e.Listed {
				continue
			}
			row := e.Path + "\t" + e.Runs
			for _, pf := range e.Phones {
				row += "\t" + phoneCell(pf)
			}
			fmt.Fprintln(tw, row)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		var hidden []string
		for i, p := range v.Phones {
			if len(v.Files) > 0 && !v.Files[0].Phones[i].Found {
				hidden = append(hidden, strconv.Itoa(p.RAMGiB))
			}
		}
		if len(hidden) > 0 {
			fmt.Fprintf(&b, "the app's device-size search filter hides the repo (%s) on %s GB phones\n", v.SizeHint, strings.Join(hidden, ", "))
		}
	}
	if len(v.Problems) > 0 {
		b.WriteString("\nproblems (publish refuses these):\n")
		for _, p := range v.Problems {
			b.WriteString("- " + p.String() + "\n")
		}
	}
	if len(v.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, s := range v.Warnings {
			b.WriteString("- " + s + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func windowText(e Entry) string {
	if e.Window > 0 {
		return strconv.Itoa(e.Window)
	}
	return "none"
}

// phoneCell is one file on one phone: offered or not, the app's verdict, and whether the
// window holds.
func phoneCell(pf PhoneFit) string {
	s := "not offered"
	if pf.Offered {
		s = "offered"
	}
	s += fmt.Sprintf(" (app: %s, %.2f of %.2f GB", pf.AppFit, float64(pf.AppNeed)/1e9, float64(pf.AppUsable)/1e9)
	if pf.Holds != nil {
		if *pf.Holds {
			s += "; holds"
		} else {
			s += "; does NOT hold"
		}
	}
	return s + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
