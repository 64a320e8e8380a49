package family

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Normalize lower-cases a name and keeps letters and digits only, so "Qwen2.5-1.5B" and
// "qwen25_15b" compare equal.
func Normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TheApp says what "the app" is where a refusal first invokes its rules: the naming rules
// and the runtime are the app's, and a user who has never heard of it is told which app.
const TheApp = "the app (the openweights Android app, which loads these files)"

// AppTokens are the app's family tokens, in the order the app matches them.
var AppTokens = []string{"qwen35", "qwen3", "qwen25", "smollm2", "smollm3", "llama32", "phi4mini", "gemma3", "lfm25"}

// appTokenNames spell each token as a release name carries it: the app compares names
// lower-cased with letters and digits only, so "LFM2.5" reads as lfm25.
var appTokenNames = map[string]string{
	"qwen35": "Qwen3.5", "qwen3": "Qwen3", "qwen25": "Qwen2.5", "smollm2": "SmolLM2", "smollm3": "SmolLM3",
	"llama32": "Llama-3.2", "phi4mini": "Phi-4-mini", "gemma3": "Gemma-3", "lfm25": "LFM2.5",
}

// AppNames spells tokens (every app family token when none are given) as release names,
// joined as a sentence does: "Llama-3.2 or SmolLM2".
func AppNames(tokens ...string) string {
	if len(tokens) == 0 {
		tokens = AppTokens
	}
	names := make([]string, len(tokens))
	for i, t := range tokens {
		names[i] = appTokenNames[t]
		if names[i] == "" {
			names[i] = t
		}
	}
	return wordsOr(names)
}

// appExcluded are substrings after which the app offers no chat template.
var appExcluded = []string{"vl", "vision", "coder", "guard"}

// AppFamily is the app's family token for an installed file name, "" when the app has no
// chat template for it.
func AppFamily(name string) string {
	t, _ := appFamily(name)
	return t
}

// AppFamilyWhy is AppFamily with, when the name reads as no family, the excluded word that
// made it so ("" when the name simply carries no family token): appview and publish say
// which word to drop, because "decoder" and "encoder" hide "coder" where nobody looks.
func AppFamilyWhy(name string) (token, excluded string) { return appFamily(name) }

// appFamily is AppFamily with the excluded substring that left a name without one ("" when
// the name carries no family token at all).
func appFamily(name string) (token, excluded string) {
	n := Normalize(name)
	if strings.Contains(n, "lfm25vl") {
		return "lfm25", ""
	}
	for _, x := range appExcluded {
		if strings.Contains(n, x) {
			return "", x
		}
	}
	for _, t := range AppTokens {
		if strings.Contains(n, t) {
			return t, ""
		}
	}
	return "", ""
}

// NoTemplateReason says why the app has no chat template for what is published as repo:
// an excluded word in its installed name, or no family name the app knows; with fam, which
// names the app takes for that architecture.
func NoTemplateReason(repo string, fam *Family) string {
	const read = "read lower-cased, letters and digits only"
	if _, x := appFamily(AppModelName(repo, "x.pte")); x != "" {
		return fmt.Sprintf("%s has no chat template for %s: it offers none for a name containing %s (%s), and this one contains %s",
			TheApp, repo, wordsOr(appExcluded), read, x)
	}
	takes := AppNames()
	if fam != nil {
		takes = fmt.Sprintf("%s for the %s architecture", AppNames(fam.AppTokens...), fam.Key)
	}
	return fmt.Sprintf("%s has no chat template for %s: it picks one by the family name in a file's name (%s), which must be %s, and this one carries none",
		TheApp, repo, read, takes)
}

// wordsOr joins words as a sentence does: "a, b or c".
func wordsOr(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}

// appBackends is the app's table for reading a backend from a path, in the order it
// checks them (lower-case substrings). It is the app's rule, not a list of our backends:
// each backend's definition names the app backend its files must read as.
var appBackends = []struct {
	name     string
	keywords []string
}{
	{"xnnpack", []string{"xnnpack"}},
	{"vulkan", []string{"vulkan"}},
	{"qnn", []string{"qnn", "qualcomm", "htp"}},
	{"neuropilot", []string{"neuropilot", "mediatek", "mtk"}},
	{"mlx", []string{"mlx"}},
}

// AppBackend is the backend the app infers from a repo name or path ("unknown" for none).
func AppBackend(text string) string {
	t := strings.ToLower(text)
	for _, b := range appBackends {
		for _, k := range b.keywords {
			if strings.Contains(t, k) {
				return b.name
			}
		}
	}
	return "unknown"
}

// AppRepoBackend is the backend the app reads into every file of a repo from the repo's
// own name, which no published repo may carry: only xnnpack is read that way ("" otherwise).
func AppRepoBackend(repoName string) string {
	const readFromRepo = "xnnpack" // the app's rule: only this keyword applies to a whole repo
	if strings.Contains(strings.ToLower(repoName), readFromRepo) {
		return readFromRepo
	}
	return ""
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func sanitize(s string) string {
	s = strings.Trim(unsafeChars.ReplaceAllString(s, "-"), "-.")
	if s == "" {
		return "model"
	}
	return s
}

// AppModelName is the name the app installs a file under: the repo name, plus the file
// stem unless the stem is "model" (then its directory).
func AppModelName(repoID, filePath string) string {
	repo := repoID
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		repo = repo[i+1:]
	}
	repo = sanitize(repo)
	dir, file := "", filePath
	if i := strings.LastIndex(filePath, "/"); i >= 0 {
		dir, file = filePath[:i], filePath[i+1:]
	}
	stem := strings.TrimSuffix(file, ".pte")
	distinct := sanitize(stem)
	if stem == "model" {
		distinct = ""
		if dir != "" {
			distinct = sanitize(dir)
		}
	}
	if distinct == "" {
		return repo + ".pte"
	}
	return repo + "-" + distinct + ".pte"
}

// sizeHint matches "1.7B", "360M" not glued to other letters or digits (Go's regexp has no
// look-behind, so the boundary is checked by hand).
var sizeHint = regexp.MustCompile(`(?i)\d+(\.\d+)?[BM]`)

// SizeHints lists the sizes written in a name, upper-cased ("1.7B", "360M").
func SizeHints(name string) []string {
	var out []string
	for _, loc := range sizeHint.FindAllStringIndex(name, -1) {
		if loc[0] > 0 && isWordByte(name[loc[0]-1], true) {
			continue
		}
		if loc[1] < len(name) && isWordByte(name[loc[1]], false) {
			continue
		}
		out = append(out, strings.ToUpper(name[loc[0]:loc[1]]))
	}
	return out
}

func isWordByte(c byte, dotToo bool) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (dotToo && c == '.')
}

// NominalBillions converts a size hint to billions of parameters ("360M" → 0.36).
func NominalBillions(hint string) float64 {
	if hint == "" {
		return 0
	}
	v, err := strconv.ParseFloat(hint[:len(hint)-1], 64)
	if err != nil {
		return 0
	}
	if strings.HasSuffix(hint, "M") {
		return v / 1000
	}
	return v
}

// WindowLabel names a window in file names: 8192 → "8k", 512 → "512".
func WindowLabel(window int) string {
	if window%1024 == 0 {
		return strconv.Itoa(window/1024) + "k"
	}
	return strconv.Itoa(window)
}
