package appview

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/pinned"
)

// ExecuServe is the second consumer of exe-expo's repos: an Android server that lists the
// organisation's repos by each backend folder's config.json, with stricter rules than the
// app (docs/research/execuserve-rules.md, rules E1–E12). This file is its verdict.

// ESRuntime is the ExecuTorch release ExecuServe links (its executorch-android AARs,
// QnnSupport.RUNTIME): the fact execuserve.runtime of config/runtime-facts.yaml, checked
// again whenever the pin moves.
var ESRuntime = pinned.CheckedOn("execuserve.runtime")

// ExecuServe's folder names (HfCatalog: BACKEND, VULKAN, QNN, NEUROPILOT).
const (
	esCPU = "xnnpack"
	esGPU = "vulkan"
	esQNN = "qnn"
	esMTK = "mtk"
)

// The rules an ExecuServe problem names.
const (
	RuleESFolder  = "execuserve-folder"
	RuleESConfig  = "execuserve-config"
	RuleESTarget  = "execuserve-target"
	RuleESVariant = "execuserve-variant"
	RuleESTwin    = "execuserve-twin"
)

// esChipFolder is a chip folder as ExecuServe names one: the backend, a slash and the
// chip as Android's Build.SOC_MODEL lower-cased (chipFolder).
var esChipFolder = regexp.MustCompile(`^(qnn|mtk)/([a-z0-9]+)$`)

// ESView is what ExecuServe does with a repo: each folder it reads or skips, each variant it
// offers or drops, and the problems (what it drops of exe-expo's files) and warnings.
type ESView struct {
	Repo     string     `json:"repo"`
	Runtime  string     `json:"runtime"`
	Folders  []ESFolder `json:"folders"`
	Problems []Problem  `json:"problems"`
	Warnings []string   `json:"warnings"`
}

// ESFolder is one folder as ExecuServe reads it.
type ESFolder struct {
	Folder string `json:"folder"`
	// RunsOn is the phones whose catalog lists the folder; Dropped why nothing of it is
	// offered ("" when it is read).
	RunsOn   string    `json:"runs_on,omitempty"`
	Dropped  string    `json:"dropped,omitempty"`
	Variants []ESEntry `json:"variants"`
	// Rule is the rule Dropped comes from.
	Rule string `json:"rule,omitempty"`
}

// ESEntry is one variant (one window) of a folder.
type ESEntry struct {
	// File is the variant's file as ExecuServe names it: "file", else the first chunk.
	File    string   `json:"file"`
	Files   []string `json:"files,omitempty"`
	Context int      `json:"context"`
	Offered bool     `json:"offered"`
	Dropped string   `json:"dropped,omitempty"`
	Rule    string   `json:"rule,omitempty"`
	npu     bool
}

// BuildExecuServe is ExecuServe's verdict on repo. intended are exe-expo's files: each one
// ExecuServe would not offer is a problem.
func BuildExecuServe(repo Repo, intended map[string]Intent) *ESView {
	v := &ESView{Repo: repo.ID, Runtime: ESRuntime, Folders: []ESFolder{}, Problems: []Problem{}, Warnings: []string{}}
	files := map[string]bool{}
	for _, f := range repo.Files {
		files[f.Path] = true
	}
	folders := map[string]bool{}
	for f := range repo.Configs {
		folders[f] = true
	}
	for p := range intended {
		folders[path.Dir(p)] = true
	}
	names := make([]string, 0, len(folders))
	for f := range folders {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, folder := range names {
		cfg, ok := repo.Configs[folder]
		f := ESFolder{Folder: folder, Variants: []ESEntry{}}
		if !ok {
			f.Dropped, f.Rule = "the folder has no config.json, and ExecuServe lists nothing without one", RuleESConfig
		} else {
			f = v.readFolder(folder, cfg, files)
		}
		v.Folders = append(v.Folders, f)
	}
	pairTwins(v.Folders)
	v.Problems = esProblems(v.Folders, intended)
	return v
}

// esRunsOn is the phones whose ExecuServe reads folder's config.json, "" for none.
func esRunsOn(folder string) string {
	switch folder {
	case esCPU:
		return "every phone"
	case esGPU:
		return "phones whose Vulkan runs the GPU builds"
	}
	m := esChipFolder.FindStringSubmatch(folder)
	if m == nil {
		return ""
	}
	chip := strings.ToUpper(m[2])
	if m[1] == esQNN {
		return "Qualcomm " + chip + " phones whose HTP drivers load"
	}
	return "MediaTek " + chip + " phones whose NeuroPilot adapter and runner load"
}

// readFolder reads one folder's config.json as ExecuServe does (E3–E9, E11).
func (v *ESView) readFolder(folder string, cfg []byte, files map[string]bool) ESFolder {
	f := ESFolder{Folder: folder, RunsOn: esRunsOn(folder), Variants: []ESEntry{}}
	drop := func(rule, why string) ESFolder { f.Rule, f.Dropped = rule, why; return f }
	if f.RunsOn == "" {
		return drop(RuleESFolder, "ExecuServe reads config.json only in xnnpack/, vulkan/, qnn/<soc>/ and mtk/<soc>/ (the chip lower-cased)")
	}
	c, err := ParseESConfig(cfg)
	if err != nil {
		return drop(RuleESConfig, "ExecuServe cannot decode it, and drops the whole folder: "+err.Error())
	}
	if c.Runtime != nil && *c.Runtime != "executorch" {
		return drop(RuleESConfig, fmt.Sprintf("runtime is %q, and ExecuServe reads only executorch", *c.Runtime))
	}
	backend := strings.SplitN(folder, "/", 2)[0]
	if c.Backend != nil {
		backend = *c.Backend
	}
	if why := esTargetWhy(folder, backend, c.Target); why != "" {
		return drop(RuleESTarget, why)
	}
	tok := "tokenizer.json"
	if c.Tokenizer != nil {
		tok = *c.Tokenizer
	}
	if !files[path.Join(folder, tok)] && !files[tok] {
		return drop(RuleESConfig, "no "+tok+" in the folder or at the root")
	}
	if c.RuntimeVersion != nil && esRuntimeMismatch(*c.RuntimeVersion, ESRuntime) {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%s: runtime_version %s: ExecuServe (ExecuTorch %s) warns that it may not load a file newer than its runtime, of another major, or more than one minor older",
			folder, *c.RuntimeVersion, ESRuntime))
	}
	for _, cv := range c.Variants {
		e := esEntry(folder, backend, cv, files)
		if e.Offered && cv.Digest(path.Base(e.File)) == "" {
			v.Warnings = append(v.Warnings, e.File+": no sha256 ExecuServe reads for it, so it cannot check the download")
		}
		f.Variants = append(f.Variants, e)
	}
	return f
}

// esTargetWhy says why ExecuServe does not offer a folder with this backend and target
// (offeredHere), "" when it does.
func esTargetWhy(folder, backend string, target *string) string {
	chip := strings.Contains(folder, "/") || target != nil
	switch {
	case !chip && backend != folder:
		return fmt.Sprintf("config.json says backend %q in %s/, and ExecuServe offers a CPU or GPU folder's files as the backend it names", backend, folder)
	case !chip:
		return ""
	case target == nil:
		return "config.json's target is null in a chip folder, and ExecuServe offers a chip folder only with its chip named in target"
	case strings.Contains(folder, "/") && folder != backend+"/"+strings.ToLower(*target):
		return fmt.Sprintf("backend/target is %s/%s, and ExecuServe offers a chip folder only when that is the folder (%s)", backend, strings.ToLower(*target), folder)
	case !strings.Contains(folder, "/"):
		return fmt.Sprintf("config.json names target %q in %s/, and ExecuServe takes a target as a chip folder's, which %s/ is not (target must be null)", *target, folder, folder)
	}
	return ""
}

// esEntry is one variant as ExecuServe reads it (Listing.variant, npuParts).
func esEntry(folder, backend string, cv ESVariant, files map[string]bool) ESEntry {
	e := ESEntry{Files: cv.Files, npu: len(cv.Files) > 0}
	if cv.Context != nil {
		e.Context = int(*cv.Context)
	}
	name := ""
	switch {
	case cv.File != nil:
		name = *cv.File
	case len(cv.Files) > 0:
		name = cv.Files[0]
	default:
		e.Dropped, e.Rule = "the variant names no file", RuleESVariant
		return e
	}
	e.File = path.Join(folder, name)
	switch {
	case !files[e.File]:
		e.Dropped = "the repo has no " + e.File
	case backend != esGPU && strings.Contains(strings.ToLower(name), esGPU):
		e.Dropped = "its name says vulkan in a " + backend + " folder, and ExecuServe lists no such file"
	case e.npu && (cv.Embedding == nil || cv.Runner == nil):
		e.Dropped = "a window cut into chunks is offered only with its embedding and runner, and this one lacks one"
	case e.npu && !allPresent(folder, append(append([]string(nil), cv.Files...), *cv.Embedding), files):
		e.Dropped = "a chunk or the embedding table is missing, and ExecuServe offers a window cut into chunks whole or not at all"
	}
	if e.Dropped != "" {
		e.Rule = RuleESVariant
	}
	e.Offered = e.Dropped == ""
	return e
}

func allPresent(folder string, names []string, files map[string]bool) bool {
	for _, n := range names {
		if !files[path.Join(folder, n)] {
			return false
		}
	}
	return true
}

// pairTwins drops each MediaTek variant without an offered XNNPACK variant of the same
// window (withCpuHalves): the NPU prefills and the CPU build decodes.
func pairTwins(folders []ESFolder) {
	cpu := map[int]bool{}
	for _, f := range folders {
		if f.Folder == esCPU && f.Dropped == "" {
			for _, e := range f.Variants {
				if e.Offered && !e.npu {
					cpu[e.Context] = true
				}
			}
		}
	}
	for i := range folders {
		for j := range folders[i].Variants {
			e := &folders[i].Variants[j]
			if e.Offered && e.npu && !cpu[e.Context] {
				e.Offered, e.Rule = false, RuleESTwin
				e.Dropped = fmt.Sprintf("no XNNPACK variant of the same window (%d tokens) in the repo to decode with, and ExecuServe drops an NPU window without one", e.Context)
			}
		}
	}
}

// esRuntimeMismatch is ExecuServe's runtime warning (runtimeMismatch): a file newer than
// the runtime, of another major, or more than one minor older; unparseable says nothing.
func esRuntimeMismatch(file, runtime string) bool {
	f, okf := parseVersion(file)
	r, okr := parseVersion(runtime)
	if !okf || !okr {
		return false
	}
	newer := f[0] > r[0] || f[0] == r[0] && (f[1] > r[1] || f[1] == r[1] && f[2] > r[2])
	return newer || f[0] != r[0] || r[1]-f[1] > 1
}

func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(strings.TrimSpace(s), ".")
	for i := range 3 {
		n, err := -1, error(nil)
		if i < len(parts) {
			n, err = strconv.Atoi(parts[i])
		}
		switch {
		case i < 2 && (i >= len(parts) || err != nil):
			return v, false // a major and a minor are needed
		case err == nil && n >= 0:
			v[i] = n
		}
	}
	return v, true
}
