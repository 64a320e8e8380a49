package publish

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// Card renders the repo's README.md from every export report in it: the files table, the
// memory each window costs, how each file was made and the license terms, so the card
// never describes a file the repo does not hold.
func Card(reports []placed) string { return CardWith(reports, nil) }

// CardWith is Card with the windows each folder did not build (folder → windows), listed
// with their reasons under the files.
func CardWith(reports []placed, skipped map[string][]SkippedWindow) string {
	rs := sortForCard(reports)
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	frontMatter(&b, rs)
	src := rs[0].Report.Source
	name := src.ID[strings.LastIndex(src.ID, "/")+1:]
	fmt.Fprintf(&b, "# %s for ExecuTorch\n\n", name)
	fmt.Fprintf(&b, "ExecuTorch exports of [%s](%s%s) (%s) for on-device inference with the [openweights](https://github.com/alpharomercoma/openweights) Android app or any ExecuTorch runtime that loads them: %s.\n\n",
		src.ID, hubURL, src.ID, revisions(rs), loadsOn(rs))
	files(&b, rs)
	notBuilt(&b, skipped)
	memory(&b, rs)
	speedSection(&b, rs)
	phones(&b, rs)
	made(&b, rs)
	license(&b, rs)
	return b.String()
}

// sortForCard orders reports by backend, target and window.
func sortForCard(reports []placed) []placed {
	rs := append([]placed(nil), reports...)
	rank := func(r *report.Report) int {
		if b := backend.ByName(r.Backend); b != nil {
			return b.Rank
		}
		return 1 << 30
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, c := rs[i].Report, rs[j].Report
		if rank(a) != rank(c) {
			return rank(a) < rank(c)
		}
		if a.Target != c.Target {
			return a.Target < c.Target
		}
		return a.Window.Context < c.Window.Context
	})
	return rs
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// title is what the card calls a report's backend.
func title(r *report.Report) string {
	b := backend.ByName(r.Backend)
	switch {
	case b == nil:
		return r.Backend
	case b.Card.Title != "":
		return b.Card.Title
	}
	return b.Title
}

// target is the Target column: any arm64, or the chip and its marketing name.
func target(r *report.Report) string {
	if r.Target == "" || r.Target == anyTarget {
		return anyTarget
	}
	if r.TargetName != "" {
		return strings.ToUpper(r.Target) + " (" + r.TargetName + ")"
	}
	return strings.ToUpper(r.Target)
}

// thousands writes n with comma separators, as the card's window and byte counts are.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func kLabel(n int) string {
	if n%1024 == 0 {
		return strconv.Itoa(n/1024) + "k"
	}
	return strconv.Itoa(n)
}

// spans are the windows per backend and target: "XNNPACK (CPU) at 2k to 32k".
func spans(rs []placed) string {
	type span struct {
		name   string
		lo, hi int
	}
	var out []*span
	idx := map[string]*span{}
	for _, p := range rs {
		r := p.Report
		key := title(r)
		if t := target(r); t != anyTarget {
			key += " " + t
		}
		s, ok := idx[key]
		if !ok {
			s = &span{name: key, lo: r.Window.Context, hi: r.Window.Context}
			idx[key] = s
			out = append(out, s)
		}
		s.lo, s.hi = min(s.lo, r.Window.Context), max(s.hi, r.Window.Context)
	}
	parts := make([]string, len(out))
	for i, s := range out {
		parts[i] = s.name + " at " + kLabel(s.lo)
		if s.hi != s.lo {
			parts[i] += " to " + kLabel(s.hi)
		}
	}
	return strings.Join(parts, "; ")
}

func files(b *strings.Builder, rs []placed) {
	b.WriteString("## Files\n\n")
	fmt.Fprintf(b, "Windows in this repo: %s. The window is fixed inside the file: the runtime allocates the whole KV cache at load, so pick the largest window the device can hold (`fits_phone_budget` in each folder's `config.json` is the estimate against a %s GB budget).\n\n",
		spans(rs), strconv.FormatFloat(float64(rs[0].Report.Window.PhoneBudgetBytes)/1e9, 'f', -1, 64))
	cov := hasCoverage(rs)
	if cov {
		b.WriteString("| Backend | Target | File | Window | Size | Smoke test | Quality vs fp32 | In the delegate |\n|---|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| Backend | Target | File | Window | Size | Smoke test | Quality vs fp32 |\n|---|---|---|---|---|---|---|\n")
	}
	sides := map[string][]string{}
	var intros []string
	for _, p := range rs {
		r := p.Report
		i := 0
		for _, f := range r.Files {
			if !strings.HasSuffix(f.Path, ".pte") {
				intro := sideIntro(r)
				if !contains(intros, intro) {
					intros = append(intros, intro)
				}
				if !contains(sides[intro], f.Path) {
					sides[intro] = append(sides[intro], f.Path)
				}
				continue
			}
			fmt.Fprintf(b, "| %s | %s | [`%s`](%s) | %s tokens | %.2f GB | %s | %s |", title(r), target(r), f.Path, f.Path,
				thousands(int64(r.Window.Context)), float64(f.Bytes)/1e9, verdict(r, i), qualityCell(r))
			if cov {
				fmt.Fprintf(b, " %s |", coverageCell(r, i))
			}
			b.WriteString("\n")
			i++
		}
	}
	b.WriteString("\n")
	if note := qualityNote(rs); note != "" {
		b.WriteString(note + "\n\n")
	}
	if note := fallbackNote(rs); note != "" {
		b.WriteString(note + "\n")
	}
	if cov {
		b.WriteString(coverageNote + "\n\n")
	}
	for _, intro := range intros {
		links := make([]string, len(sides[intro]))
		for i, s := range sides[intro] {
			links[i] = fmt.Sprintf("[`%s`](%s)", s, s)
		}
		fmt.Fprintf(b, "%s: %s.\n\n", intro, strings.Join(links, ", "))
	}
	if tk := rs[len(rs)-1].Report.Tokenizer; tk != "" {
		fmt.Fprintf(b, "Tokenizer: [`%s`](%s), copied unchanged from the source repo. ", tk, tk)
	}
	b.WriteString("Each backend folder has a `config.json` listing every window as a variant with the metadata the `.pte` reports, and an `export-report-<window>.json` per window with the full export record.\n\n")
}

// sideIntro is the sentence that lists a backend's side files.
func sideIntro(r *report.Report) string {
	if b := backend.ByName(r.Backend); b != nil && b.Card.SideFiles != "" {
		return b.Card.SideFiles
	}
	return title(r) + " folders also hold files shared by every window"
}

// verdict is the check column of the i-th program of r: the smoke run's when there was
// one, else the structural check's.
func verdict(r *report.Report, i int) string {
	if s := r.Smoke; s != nil {
		if !s.Passed {
			return "failed"
		}
		v := "passed"
		if s.Answered {
			v += ` ("Paris")`
		}
		if s.TemplateError != "" {
			v += " with a completion prompt (the chat template did not render)"
		} else if s.Prompt != "" {
			v += " with the chat template"
		}
		return v
	}
	if i >= len(r.StructuralCheck) {
		return "not run"
	}
	if !r.StructuralCheck[i].Passed {
		return "structure check failed"
	}
	if b := backend.ByName(r.Backend); b != nil && b.Card.Verified != "" {
		return b.Card.Verified
	}
	return "structure checked"
}
