// Package appview says what the openweights Android app does with a repo of .pte files:
// which files it lists and which it drops (and why), the family, backend and window it
// reads from each, the tokenizer it pairs, and, per phone class, whether it would offer
// the file and whether exe-expo's own memory model says the phone holds it.
//
// Every rule here is the app's, read from its public source and recorded with its
// evidence in docs/research/app-rules.md; nothing here is exe-expo's preference. The
// package is a pure function of a repo listing, so the same code answers for a published
// repo (read through pkg/hub) and for an export folder before publish (laid out by
// internal/publish exactly as publish will write it).
package appview

import (
	"regexp"
	"strings"
	"unicode"
)

// MaxListed is how many .pte files the app keeps of a repo: it sorts them by size and
// takes the first 40 before anything else filters them (HuggingFaceClient.detail,
// MAX_FILES_PER_REPO), so a file past the 40 smallest is never seen whatever its backend.
const MaxListed = 40

// Backend is the delegate the app reads from a name.
type Backend string

// The app's backends (CompiledBackend). Unknown is a name that says nothing, which the app
// treats as worth trying on the CPU.
const (
	XNNPACK    Backend = "xnnpack"
	Vulkan     Backend = "vulkan"
	VGF        Backend = "vgf"
	QNN        Backend = "qnn"
	NeuroPilot Backend = "neuropilot"
	ENN        Backend = "enn"
	MLX        Backend = "mlx"
	Unknown    Backend = "unknown"
)

// backendMarkers are the words the app looks for, each with the backend it reads. The app
// reads the backend whose marker ends last in the text, because an installed name is the
// repo's name followed by the file's and the file is the more specific.
var backendMarkers = []struct {
	backend Backend
	re      *regexp.Regexp
}{
	{Vulkan, regexp.MustCompile(`vulkan`)},
	{XNNPACK, regexp.MustCompile(`xnnpack`)},
	{VGF, regexp.MustCompile(`vgf`)},
	{QNN, regexp.MustCompile(`qnn|qualcomm|htp`)},
	{NeuroPilot, regexp.MustCompile(`neuropilot|mediatek|mtk`)},
	// "enn" counts only as a whole segment (it falls inside ordinary words); Go's regexp
	// has no look-ahead, so the closing boundary is part of the match and the end is
	// corrected in backendOf.
	{ENN, regexp.MustCompile(`exynos|(?:^|[/_.-])enn(?:[/_.-]|$)`)},
	{MLX, regexp.MustCompile(`mlx`)},
}

// backendOf is the backend the app reads in text (lower-cased): the one whose marker ends
// last, Unknown when none appears.
func backendOf(text string) Backend {
	t := strings.ToLower(text)
	best, bestEnd := Unknown, -1
	for _, m := range backendMarkers {
		locs := m.re.FindAllStringIndex(t, -1)
		if len(locs) == 0 {
			continue
		}
		end := locs[len(locs)-1][1]
		if m.backend == ENN && !strings.HasSuffix(t[:end], "enn") && !strings.HasSuffix(t[:end], "exynos") {
			end-- // the trailing boundary character is not part of the marker
		}
		if end > bestEnd {
			best, bestEnd = m.backend, end
		}
	}
	return best
}

// BackendOf is the backend the app reads for the file at path in repo: the path first,
// since a repo can hold several backends' folders and its name speaks for one at most; the
// repo's name only when the path is silent.
func BackendOf(repo, path string) Backend {
	if b := backendOf(path); b != Unknown {
		return b
	}
	return backendOf(repo)
}

// socSegment is a chip folder as the app recognises one (sm8750, mt6991, e9955).
var socSegment = regexp.MustCompile(`(?i)^(sm|mt|e)\d{3,5}[a-z]?$`)

// ChipIn is the chip folder of a chip-locked file's path (QNN, NeuroPilot, ENN: the app
// offers those only on a phone whose Build.SOC_MODEL is that chip), lower-cased, "" for none: the
// first folder that reads as a chip.
func ChipIn(path string) string {
	segs := strings.Split(path, "/")
	for _, s := range segs[:len(segs)-1] {
		if socSegment.MatchString(s) {
			return strings.ToLower(s)
		}
	}
	return ""
}

// Runs says where the app would run a file of backend b at path: "" for nowhere, with the
// reason; otherwise the condition a phone must meet. Discover offers only what the app's
// build opens, XNNPACK and Vulkan (ExecuTorchSupport.BACKENDS, NeuroPilot taken out after
// its chunks aborted the app); a name that says nothing is tried on the CPU.
func Runs(b Backend, path string) (where, never string) {
	switch b {
	case XNNPACK, Unknown:
		return "any phone", ""
	case Vulkan:
		return "a phone with Vulkan 1.1 whose GPU runs the delegate's shaders", ""
	case NeuroPilot:
		return "", "the app's Discover offers no NeuroPilot file: its stock runtime registers no NeuropilotBackend (its own NPU path reads chunks staged beside a CPU file, never from Discover)"
	default:
		return "", "the app links no " + string(b) + " delegate, so a " + string(b) + " file fails to load and is not offered"
	}
}

// keptPunctuation is what the app keeps of a name besides letters and digits.
const keptPunctuation = "-_."

// sanitize is the app's file-name cleaning: anything but letters, digits and -_. becomes a
// dash, dashes and dots are trimmed from the ends, and nothing left is "model".
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isLetterOrDigit(r) || strings.ContainsRune(keptPunctuation, r) {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "model"
	}
	return out
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// InstalledName is the name the app saves the file at path of repo under, which is where
// it reads the family from: the repo's name, a dash and the file's stem (or, for a stem
// "model", its folder); a GPU file whose folder alone says vulkan gets "-vulkan" added so
// that it installs beside, not over, the CPU file of the same name.
func InstalledName(repo, path string) string {
	name := sanitize(repo[strings.LastIndex(repo, "/")+1:])
	file := path[strings.LastIndex(path, "/")+1:]
	stem := file
	if strings.HasSuffix(strings.ToLower(file), ".pte") {
		stem = file[:len(file)-len(".pte")]
	}
	dir := ""
	if i := strings.LastIndex(path, "/"); i >= 0 {
		dir = sanitize(path[:i])
	}
	distinct := sanitize(stem)
	if stem == "" || strings.EqualFold(distinct, "model") {
		distinct = dir
	}
	if distinct != "" {
		name += "-" + distinct
	}
	if backendOf(dir) == Vulkan && backendOf(distinct) != Vulkan {
		name += "-vulkan"
	}
	return name + ".pte"
}

// tokenizerNames are the files the app takes as a tokenizer, best first.
var tokenizerNames = []string{"tokenizer.json", "tokenizer.model"}

func tokenizerRank(p string) int {
	base := p[strings.LastIndex(p, "/")+1:]
	for i, n := range tokenizerNames {
		if base == n {
			return i
		}
	}
	return -1
}

// PairTokenizer is the tokenizer the app installs with weights, "" for none: the one in
// the deepest folder enclosing the weights (tokenizer.json before tokenizer.model), except
// that once any tokenizer sits in a folder, nested weights never borrow the root one.
func PairTokenizer(tokenizers []string, weights string) string {
	scoped := false
	for _, t := range tokenizers {
		if strings.Contains(t, "/") {
			scoped = true
		}
	}
	best, bestDepth, bestRank := "", -1, 0
	for _, t := range tokenizers {
		dir := ""
		if i := strings.LastIndex(t, "/"); i >= 0 {
			dir = t[:i]
		}
		if dir != "" && !strings.HasPrefix(weights, dir+"/") {
			continue
		}
		depth, rank := strings.Count(t, "/"), tokenizerRank(t)
		if depth > bestDepth || depth == bestDepth && rank < bestRank {
			best, bestDepth, bestRank = t, depth, rank
		}
	}
	if best != "" && scoped && !strings.Contains(best, "/") && strings.Contains(weights, "/") {
		return ""
	}
	return best
}

// sizeHint is the parameter count the app reads from a repo's name ("1.7B", "360M"),
// not glued to letters, digits or a dot on the left nor to letters or digits on the right.
var sizeHint = regexp.MustCompile(`(?i)\d+(\.\d+)?[bm]`)

// SizeHint is the app's size hint of a repo name, upper-cased, "" for none: the first
// match only, which is all the app reads.
func SizeHint(repoName string) string {
	for _, loc := range sizeHint.FindAllStringIndex(repoName, -1) {
		if loc[0] > 0 && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.", rune(repoName[loc[0]-1])) {
			continue
		}
		if loc[1] < len(repoName) && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", rune(repoName[loc[1]])) {
			continue
		}
		return strings.ToUpper(repoName[loc[0]:loc[1]])
	}
	return ""
}
