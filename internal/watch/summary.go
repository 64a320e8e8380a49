package watch

import (
	"fmt"
	"sort"
	"strings"
)

// Markdown is the step summary: what was checked, skipped and why, dispatched and failed,
// so that a run can be judged from its summary page without reading the state.
func (s *Summary) Markdown() string {
	var b strings.Builder
	b.WriteString("### Hugging Face watcher\n\n")
	if s.DryRun {
		b.WriteString("Dry run: nothing was dispatched and the state was not saved.\n\n")
	}
	if s.Seeded > 0 {
		fmt.Fprintf(&b, "First run: recorded %d existing models from the watched orgs without exporting them. Export any of them with the backfill input.\n\n", s.Seeded)
	}
	checked := append(append([]string{}, s.New...), s.Backfilled...)
	sort.Strings(checked)
	verb, list := "dispatched", "Dispatched:"
	if s.DryRun {
		verb, list = "would dispatch", "Would dispatch:"
	}
	fmt.Fprintf(&b, "Checked %d model(s); %s %d export run(s)", len(checked), verb, len(s.Dispatched))
	if s.Stage != "" {
		fmt.Fprintf(&b, " (stage: %s)", s.Stage)
	}
	b.WriteString(".\n")
	if len(s.Failed) > 0 {
		b.WriteString("\nCould not dispatch (still pending, retried next run):\n\n")
		for _, f := range s.Failed {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if len(s.Rebuilds) > 0 {
		b.WriteString("\nQueued again, built for another runtime than the pipeline's (the catalog keeps their files listed until the new ones land):\n\n")
		for _, r := range s.Rebuilds {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	if len(checked) > 0 {
		b.WriteString("\n| Model | Result | Why |\n| --- | --- | --- |\n")
		for _, id := range checked {
			e := s.State.Models[id]
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(id), result(e), cell(why(e)))
		}
	}
	if len(s.Dispatched) > 0 {
		fmt.Fprintf(&b, "\n%s\n\n", list)
		for _, d := range s.Dispatched {
			fmt.Fprintf(&b, "- %s\n", d)
		}
		if s.Cost.Jobs > 0 {
			what := "This run started"
			if s.DryRun {
				what = "This run would start"
			}
			fmt.Fprintf(&b, "\n%s %s, from the measured export times and runner prices in pipeline.yaml.\n", what, s.Cost.Line())
		}
	}
	return b.String()
}

// result words a checked model's status for people: a model with a backend to export is
// eligible whether or not its stage has come.
func result(e *Entry) string {
	switch e.Status {
	case Pending, Dispatched:
		return "eligible"
	case Retry:
		return "metadata unreadable, retried next run"
	}
	return e.Status
}

// why is the model's refusals, else each skipped backend with its reason.
func why(e *Entry) string {
	if len(e.Reasons) > 0 {
		return strings.Join(e.Reasons, "; ")
	}
	var parts []string
	for name, b := range e.Backends {
		if b.Status == Skipped {
			parts = append(parts, name+": "+b.Reason)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// cell keeps a table cell on its row: a "|" would split it and a newline would end it.
func cell(s string) string {
	return strings.NewReplacer("|", "/", "\n", " ").Replace(s)
}
