package appview

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/family"
)

// Repo is a repo as the app can see it: its id, every file with its size, and the bytes of
// each folder's config.json ("" is the root folder).
type Repo struct {
	ID      string            `json:"id"`
	Files   []File            `json:"files"`
	Configs map[string][]byte `json:"-"`
	// Programs are what the app's pre-load probe would read of each .pte (path → facts);
	// a file missing here is held to what its folder's config.json says of it.
	Programs map[string]Program `json:"-"`
}

// File is one file of a repo.
type File struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// View is what the app does with a repo.
type View struct {
	Repo string `json:"repo"`
	// SizeHint is the parameter count the app reads from the repo's name, which only its
	// device-size search filter uses.
	SizeHint   string   `json:"size_hint"`
	Tokenizers []string `json:"tokenizers"`
	Files      []Entry  `json:"files"`
	Phones     []Phone  `json:"phones"`
	// Problems are the app's rules this repo breaks, each with the rule and its fix: what
	// publish refuses. Warnings are the files the app offers a phone that cannot hold them.
	Problems []Problem `json:"problems"`
	Warnings []string  `json:"warnings"`
}

// Entry is one .pte as the app treats it.
type Entry struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// Rank is the file's place in the app's size order (1: smallest).
	Rank int `json:"rank"`
	// Listed says the app shows the file; Dropped says why not.
	Listed  bool   `json:"listed"`
	Dropped string `json:"dropped,omitempty"`
	// Backend is what the app reads from the path (then the repo's name); Runs is where it
	// runs it ("" for nowhere).
	Backend       Backend `json:"backend"`
	Runs          string  `json:"runs,omitempty"`
	InstalledName string  `json:"installed_name"`
	// Family is the app's chat-template family read from InstalledName, "" for none.
	Family string `json:"family"`
	// Window is what the app shows from the folder's config.json, 0 for none; Exported is
	// the window exe-expo built (config.json's context), 0 where it does not say.
	Window   int `json:"window"`
	Exported int `json:"exported_window,omitempty"`
	// Chunks is how many programs exe-expo cut the window into (0: one program); the app
	// reads no window for a chunk, whose variant lists it under "files".
	Chunks int `json:"chunks,omitempty"`
	// Refused is why the app refuses to open the file it lists (rule 11), "" when it opens
	// it or the facts are unknown.
	Refused string `json:"refused,omitempty"`
	// Tokenizer is the one the app installs with the file, "" for none.
	Tokenizer string `json:"tokenizer"`
	// Resident is exe-expo's memory model of the window (file, KV cache, runtime), 0 where
	// the folder's config.json does not record it.
	Resident int64      `json:"device_resident_bytes,omitempty"`
	Phones   []PhoneFit `json:"phones"`
}

// PhoneFit is one file on one phone class.
type PhoneFit struct {
	RAMGiB int `json:"ram_gib"`
	// Found says the app's device-size search filter shows the repo on this phone.
	Found bool `json:"found"`
	// AppFit is the app's own verdict, which ignores the KV cache; Offered says the app
	// offers the file on a phone of this class that meets Runs and does not call it a
	// file that won't run.
	AppFit  Fit  `json:"app_fit"`
	Offered bool `json:"offered"`
	// AppNeed and AppUsable are the app's own figures: the file × 2.4 + 450 MiB, against
	// 65% of the class's RAM (50% on a low-RAM phone); Resident is exe-expo's, for the window.
	AppNeed   int64 `json:"app_need_bytes"`
	AppUsable int64 `json:"app_usable_bytes"`
	// Holds is exe-expo's memory model: the window's resident bytes within what the class
	// leaves to the app; nil where the resident bytes are unknown.
	Holds *bool `json:"holds"`
}

// Problem is one of the app's rules a repo breaks.
type Problem struct {
	// Rule names the app rule; File the .pte it is about ("" for the repo).
	Rule string `json:"rule"`
	File string `json:"file,omitempty"`
	// Why says what the app would do; Fix what to change.
	Why string `json:"why"`
	Fix string `json:"fix"`
}

// The rules a Problem names, as docs/research/app-rules.md numbers them.
const (
	RuleFirst40   = "first-40"
	RuleBackend   = "backend"
	RuleFamily    = "family"
	RuleWindow    = "window"
	RuleTokenizer = "tokenizer"
	RuleOpens     = "opens"
)

func (p Problem) String() string {
	s := "[" + p.Rule + "] "
	if p.File != "" {
		s += p.File + ": "
	}
	return s + p.Why + "; " + p.Fix
}

// Intent is what exe-expo built a .pte as: the backend the app must read (the backend's
// app name), the window, and whether the window is cut into chunks.
type Intent struct {
	Backend string `json:"backend"`
	Window  int    `json:"window"`
	Chunked bool   `json:"chunked,omitempty"`
}

// Build is what the app does with repo on each of phones. intended holds, for each .pte
// exe-expo built, what it was built as; the files missing from it are someone else's and
// are held to the rules that need no intent (the first 40, the family, the tokenizer).
func Build(repo Repo, phones []Phone, intended map[string]Intent) *View {
	v := &View{Repo: repo.ID, SizeHint: SizeHint(repo.ID[strings.LastIndex(repo.ID, "/")+1:]), Phones: phones,
		Tokenizers: []string{}, Files: []Entry{}, Problems: []Problem{}, Warnings: []string{}}
	var ptes []File
	for _, f := range repo.Files {
		if tokenizerRank(f.Path) >= 0 {
			v.Tokenizers = append(v.Tokenizers, f.Path)
		}
		if strings.HasSuffix(strings.ToLower(f.Path), ".pte") {
			ptes = append(ptes, f)
		}
	}
	sort.Strings(v.Tokenizers)
	// The Hub lists a repo's files by path; the app's sort by size keeps that order
	// among equal sizes.
	sort.SliceStable(ptes, func(i, j int) bool { return ptes[i].Path < ptes[j].Path })
	sort.SliceStable(ptes, func(i, j int) bool { return ptes[i].Size < ptes[j].Size })
	windows, facts, progs := map[string]int{}, map[string]variantFacts{}, map[string]Program{}
	for folder, cfg := range repo.Configs {
		for name, p := range configPrograms(cfg) {
			progs[joinFolder(folder, name)] = p
		}
		for name, w := range Windows(cfg) {
			windows[joinFolder(folder, name)] = w
		}
		for name, f := range residents(cfg) {
			facts[joinFolder(folder, name)] = f
		}
	}
	for i, f := range ptes {
		e := entry(repo.ID, f, i+1, v.Tokenizers, windows, facts)
		p, ok := repo.Programs[f.Path]
		if !ok {
			p = progs[f.Path]
		}
		if e.Listed {
			e.Refused = p.Refusal()
		}
		if in, ok := intended[f.Path]; ok {
			e.Exported = in.Window
			switch {
			case !in.Chunked:
				e.Chunks = 0
			case e.Chunks == 0:
				e.Chunks = 1 // a chunk whose count config.json does not say
			}
		}
		e.Phones = phoneFits(e, phones, v.SizeHint)
		v.Files = append(v.Files, e)
	}
	v.Problems = problems(v, repo.Configs, intended)
	v.Warnings = warnings(v)
	return v
}

func joinFolder(folder, name string) string {
	if folder == "" || folder == "." {
		return name
	}
	return folder + "/" + name
}

// entry reads one .pte as the app does.
func entry(repo string, f File, rank int, tokenizers []string, windows map[string]int, facts map[string]variantFacts) Entry {
	e := Entry{Path: f.Path, Size: f.Size, Rank: rank, Backend: BackendOf(repo, f.Path),
		InstalledName: InstalledName(repo, f.Path), Window: windows[f.Path],
		Tokenizer: PairTokenizer(tokenizers, f.Path)}
	e.Family = family.AppFamily(e.InstalledName)
	if fact, ok := facts[f.Path]; ok {
		e.Exported, e.Resident, e.Chunks = fact.Window, fact.Resident, fact.Chunks
	}
	where, never := Runs(e.Backend, f.Path)
	e.Runs = where
	switch {
	case rank > MaxListed:
		e.Dropped = fmt.Sprintf("it is the %s smallest .pte of the repo and the app keeps the %d smallest", ordinal(rank), MaxListed)
	case len(tokenizers) == 0:
		e.Dropped = "the repo has no tokenizer.json or tokenizer.model, and the app lists no .pte without one"
	case never != "":
		e.Dropped = never
	case e.Tokenizer == "":
		e.Dropped = "no tokenizer pairs with it: a folder holds one and this file's folders do not, and the app never borrows the root one then"
	}
	e.Listed = e.Dropped == ""
	return e
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// phoneFits holds one file against each phone class.
func phoneFits(e Entry, phones []Phone, hint string) []PhoneFit {
	out := make([]PhoneFit, len(phones))
	for i, p := range phones {
		pf := PhoneFit{RAMGiB: p.RAMGiB, Found: withinCeiling(hint, p.ceilingBillions()), AppFit: appFit(e.Size, p),
			AppNeed: appRequired(e.Size), AppUsable: p.usable()}
		pf.Offered = e.Listed && e.Refused == "" && pf.AppFit != WontRun
		if e.Resident > 0 {
			holds := e.Resident <= p.AppBytes
			pf.Holds = &holds
		}
		out[i] = pf
	}
	return out
}

// withinCeiling is the app's device-size filter: a hint above the ceiling hides the repo,
// and a repo whose name states no size is kept.
func withinCeiling(hint string, ceiling int) bool {
	b := family.NominalBillions(hint)
	return hint == "" || b <= float64(ceiling)
}

// problems are the app rules the repo's files break. Only files exe-expo built (intended)
// are held to the backend rule; every listed-or-not .pte is held to the rest.
func problems(v *View, configs map[string][]byte, intended map[string]Intent) []Problem {
	var out []Problem
	for _, e := range v.Files {
		in, ours := intended[e.Path]
		want := in.Backend
		// A file the app never runs loses nothing past the 40 (it still counts, and pushes
		// the others out).
		if e.Rank > MaxListed && e.Runs != "" {
			out = append(out, Problem{Rule: RuleFirst40, File: e.Path,
				Why: fmt.Sprintf("the app sorts a repo's .pte files by size and keeps the %d smallest; this one is the %s, so no phone ever sees it", MaxListed, ordinal(e.Rank)),
				Fix: fmt.Sprintf("publish it to a repo of its own, or remove larger windows so that the repo holds at most %d .pte files", MaxListed)})
		}
		if ours && string(e.Backend) != want {
			out = append(out, Problem{Rule: RuleBackend, File: e.Path,
				Why: fmt.Sprintf("the app reads its backend as %s (from the path first, then the repo name; the marker named last wins), not %s", e.Backend, want),
				Fix: fmt.Sprintf("put it in a folder named for %s and keep other backends' words out of its file name", want)})
		}
		if e.Family == "" {
			fix := "name the repo (or the file) after a family the app has a template for: " + family.AppNames()
			if _, x := family.AppFamilyWhy(e.InstalledName); x != "" {
				fix = fmt.Sprintf("rename the repo or the file so that %q no longer appears in it (read lower-cased, letters and digits only)", x)
			}
			out = append(out, Problem{Rule: RuleFamily, File: e.Path,
				Why: fmt.Sprintf("the app installs it as %s and reads no chat-template family from that name", e.InstalledName),
				Fix: fix})
		}
		if e.Tokenizer == "" && len(v.Tokenizers) > 0 && e.Runs != "" {
			out = append(out, Problem{Rule: RuleTokenizer, File: e.Path,
				Why: "no tokenizer pairs with it: the repo holds a tokenizer in a folder, so the app refuses to pair nested weights with the root one",
				Fix: "put tokenizer.json in this file's folder (or an enclosing one), or keep tokenizers at the root only"})
		}
		if e.Tokenizer != "" && path.Dir(e.Tokenizer) != "." && ours && e.Runs != "" {
			// exe-expo's tokenizer is the repo root's; a nested one is someone else's.
			out = append(out, Problem{Rule: RuleTokenizer, File: e.Path,
				Why: fmt.Sprintf("the app pairs it with %s, the deepest tokenizer enclosing it, not the root tokenizer.json it was exported with", e.Tokenizer),
				Fix: "remove " + e.Tokenizer + " from the repo, or publish this file to a repo of its own"})
		}
		if ours && e.Refused != "" {
			out = append(out, Problem{Rule: RuleOpens, File: e.Path, Why: e.Refused,
				Fix: "export it so that it keeps " + seqLenMethod + " and calls only " + strings.Join(Registered, " and ") + ", or publish it where the app does not list it"})
		}
		// A file the app never runs (a QNN file, for one) has no window or tokenizer in it
		// to get wrong: it is published for other runtimes.
		runs := e.Runs != ""
		if ours && runs && e.Exported > 0 && (e.Window != 0 && e.Window != e.Exported || e.Window == 0 && e.Chunks == 0) {
			out = append(out, Problem{Rule: RuleWindow, File: e.Path,
				Why: windowWhy(e, configs),
				Fix: "give the window its own program file named in its variant's \"file\" (a bare name in the same folder), with get_max_context_len under methods"})
		}
	}
	if len(v.Tokenizers) == 0 && len(v.Files) > 0 {
		out = append(out, Problem{Rule: RuleTokenizer,
			Why: "the repo holds no tokenizer.json or tokenizer.model, so the app lists none of its .pte files",
			Fix: "publish the source's tokenizer.json at the repo root"})
	}
	return out
}

// windowWhy says why the app shows no window, or the wrong one, for e.
func windowWhy(e Entry, configs map[string][]byte) string {
	dir := path.Dir(e.Path)
	if dir == "." {
		dir = ""
	}
	cfg, ok := configs[dir]
	switch {
	case !ok:
		return "its folder has no config.json, so the app shows no window for it"
	case len(cfg) > MaxConfigBytes:
		return fmt.Sprintf("its folder's config.json is %d bytes and the app reads at most %d, so it shows no window", len(cfg), MaxConfigBytes)
	case e.Window == 0:
		return fmt.Sprintf("the app reads a window only from a variant whose \"file\" is this file's bare name, and none is (exported at %d tokens)", e.Exported)
	default:
		return fmt.Sprintf("the app shows a %d-token window and the file was exported at %d", e.Window, e.Exported)
	}
}

// warnings are the files the app offers a phone class whose memory, by exe-expo's model,
// cannot hold the window: the app sizes a .pte without its KV cache.
func warnings(v *View) []string {
	var out []string
	for _, e := range v.Files {
		var classes []string
		for _, pf := range e.Phones {
			if pf.Offered && pf.Holds != nil && !*pf.Holds {
				classes = append(classes, strconv.Itoa(pf.RAMGiB))
			}
		}
		if e.Listed && e.Window == 0 && e.Chunks > 0 {
			out = append(out, fmt.Sprintf("%s: the app shows no window for it (a chunk of a %d-token window, listed under its variant's \"files\")", e.Path, e.Exported))
		}
		if len(classes) > 0 {
			out = append(out, fmt.Sprintf("%s: kill trap: the app offers it on %s GB phones, which cannot hold its %d-token KV cache (%.2f GB on the phone)",
				e.Path, strings.Join(classes, ", "), e.Exported, float64(e.Resident)/1e9))
		}
	}
	return out
}
