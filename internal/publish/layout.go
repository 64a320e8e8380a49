// Package publish puts one exported window on the Hugging Face Hub, in the model's one
// repo (<org>/<source name>-ExecuTorch): the window's files replace only that window's
// files in its backend folder, and the folder's config.json and the repo's model card are
// rebuilt from every export report in the repo, so what the app reads always agrees with
// what was exported, whichever window was published last.
package publish

import (
	"path"
	"regexp"
	"strings"
)

// windowRe finds the window label at the end of a published file's name
// (docs/research: the reference's window_of).
var windowRe = regexp.MustCompile(`-(\d+k|\d+)(\.pte|-chunk\d+of\d+\.pte)$`)

// windowOf is the window label a file belongs to, "" for a file shared by every window
// (config.json, MediaTek's embedding table).
func windowOf(name string) string {
	base := path.Base(name)
	if strings.HasPrefix(base, "export-report-") && strings.HasSuffix(base, ".json") {
		return strings.TrimSuffix(strings.TrimPrefix(base, "export-report-"), ".json")
	}
	if m := windowRe.FindStringSubmatch(base); m != nil {
		return m[1]
	}
	return ""
}

// superseded says whether a repo path is replaced by a publish of window label into
// folder: the folder's own files of that window and its config.json. Other windows and
// other folders are never touched.
func superseded(p, folder, label string) bool {
	if path.Dir(p) != folder {
		return false
	}
	base := path.Base(p)
	return base == "config.json" || base == "export-report.json" || windowOf(base) == label
}

// tokenizerNames are the files the app reads as the tokenizer, which live at the repo root
// only: the app looks for them there, and a copy in a folder would be a second truth.
var tokenizerNames = map[string]bool{
	"tokenizer.json": true, "tokenizer.model": true, "tokenizer_config.json": true,
	"special_tokens_map.json": true, "vocab.json": true, "merges.txt": true,
}

func isTokenizer(p string) bool { return tokenizerNames[strings.ToLower(path.Base(p))] }

// isReport says whether a repo path is an export report.
func isReport(p string) bool {
	b := path.Base(p)
	return strings.HasPrefix(b, "export-report") && strings.HasSuffix(b, ".json")
}
