package publish

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/runtimecompat"
)

// hubURL is where the card links models; the Hub serves the same page under any mirror.
const hubURL = "https://huggingface.co/"

// baseTags are the tags every published repo carries, beside its backend folders.
var baseTags = []string{"android", "executorch", "on-device", "openweights"}

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

// loadsOn says, for each ExecuTorch release the files were made with, the runtimes that
// load them without a warning (internal/runtimecompat): "made with ExecuTorch 2.3.1, they
// load on 2.3.1 to 2.4.x".
func loadsOn(rs []placed) string {
	var made []string
	for _, p := range rs {
		if v := p.Report.Toolchain["executorch"]; !slices.Contains(made, v) {
			made = append(made, v)
		}
	}
	sort.Strings(made)
	var out []string
	for _, v := range made {
		if r, err := runtimecompat.LoadsOn(v); err == nil {
			out = append(out, fmt.Sprintf("made with ExecuTorch %s, they load on %s", v, r))
		} else {
			out = append(out, "made with ExecuTorch "+v)
		}
	}
	return strings.Join(out, "; ")
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

func frontMatter(b *strings.Builder, rs []placed) {
	l := rs[0].Report.Source.License
	b.WriteString("---\n")
	for _, kv := range [][2]string{{"license", l.License}, {"license_name", l.LicenseName}, {"license_link", l.LicenseLink}} {
		if kv[1] != "" {
			fmt.Fprintf(b, "%s: %s\n", kv[0], kv[1])
		}
	}
	fmt.Fprintf(b, "base_model:\n- %s\nbase_model_relation: quantized\nlibrary_name: executorch\npipeline_tag: text-generation\ntags:\n", rs[0].Report.Source.ID)
	tags := append([]string(nil), baseTags...)
	for _, p := range rs {
		tags = append(tags, strings.Split(p.Path, "/")[0])
	}
	sort.Strings(tags)
	for i, t := range tags {
		if i == 0 || tags[i-1] != t {
			fmt.Fprintf(b, "- %s\n", t)
		}
	}
	b.WriteString("---\n\n")
}

// revisions names the source revision(s) the files were built from.
func revisions(rs []placed) string {
	var shas []string
	for _, p := range rs {
		if s := short(p.Report.Source.SHA); s != "" && !contains(shas, s) {
			shas = append(shas, s)
		}
	}
	switch len(shas) {
	case 0:
		return "revision unknown"
	case 1:
		return "revision `" + shas[0] + "`"
	}
	return "revisions `" + strings.Join(shas, "`, `") + "`; see each variant's `source_revision`"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
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

func memory(b *strings.Builder, rs []placed) {
	var lines []string
	for _, p := range rs {
		r := p.Report
		kv := kvPerToken(r)
		if kv == nil {
			continue
		}
		per, n := *kv, int64(r.Window.Context)
		lines = append(lines, fmt.Sprintf("- %s at %s tokens: the KV cache costs %s bytes per token (%s), %s bytes for the whole window, allocated in full when the model loads.",
			title(r), thousands(n), thousands(per), cacheKind(r), thousands(per*n)))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Memory\n\n" + strings.Join(lines, "\n") + "\n\n")
}

// cacheKind is how a file keeps its KV cache as its recipe recorded it; a report from
// before the recipe recorded it had the only cache export_llm files then had, fp32, and the
// NPU backends keep their own 16-bit ones.
func cacheKind(r *report.Report) string {
	if kv := recordedCache(r); kv != "" {
		return kv
	}
	if r.Backend == "qnn" || r.Backend == "mediatek" {
		return "16-bit"
	}
	return "fp32"
}

// recordedCache is the KV cache the export's recipe recorded (kv_cache_dtype), "" for an
// NPU backend's report or one from before it was recorded.
func recordedCache(r *report.Report) string {
	kv, _ := r.Recipe["kv_cache_dtype"].(string)
	return kv
}

// kvPerToken is the KV cache's bytes per token as the structural check read it back from
// the file, or, for a report from before it was read, the size model's figure; nil for the
// NPU backends.
func kvPerToken(r *report.Report) *int64 {
	for _, c := range r.StructuralCheck {
		if c.KVCache != nil {
			per := c.KVCache.BytesPerToken
			return &per
		}
	}
	return r.Window.KVBytesPerToken
}

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
