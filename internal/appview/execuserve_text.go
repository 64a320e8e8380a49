package appview

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"text/tabwriter"
)

// esProblems are exe-expo's files ExecuServe would not offer: the folder it skips or cannot
// read, the variant it drops, or a file no variant names. Only folders of the backends
// ExecuServe runs count: another backend's folder (a new NPU's) is not meant for it.
func esProblems(folders []ESFolder, intended map[string]Intent) []Problem {
	var out []Problem
	covered := map[string]bool{}
	for _, f := range folders {
		ours := oursIn(f.Folder, intended)
		switch strings.SplitN(f.Folder, "/", 2)[0] {
		case esCPU, esGPU, esQNN, esMTK:
		default:
			continue
		}
		if len(ours) == 0 {
			continue
		}
		if f.Dropped != "" {
			out = append(out, Problem{Rule: f.Rule, File: ours[0], Why: f.Folder + "/: " + f.Dropped,
				Fix: "write the folder's config.json as ExecuServe reads it (docs/research/execuserve-rules.md)"})
			for _, p := range ours {
				covered[p] = true
			}
			continue
		}
		for _, e := range f.Variants {
			for _, n := range append([]string{e.File}, joinAll(f.Folder, e.Files)...) {
				covered[n] = true
			}
			if _, mine := intended[e.File]; mine && !e.Offered {
				fix := "publish the window as ExecuServe reads it"
				if e.Rule == RuleESTwin {
					fix = fmt.Sprintf("publish the XNNPACK window of %d tokens beside it, or leave the MediaTek window out", e.Context)
				}
				out = append(out, Problem{Rule: e.Rule, File: e.File, Why: e.Dropped, Fix: fix})
			}
		}
		for _, p := range ours {
			if !covered[p] {
				out = append(out, Problem{Rule: RuleESVariant, File: p, Why: "no variant of " + f.Folder + "/config.json names it, so ExecuServe never offers it",
					Fix: "rebuild config.json from the folder's export reports"})
			}
		}
	}
	return out
}

// oursIn are exe-expo's .pte files in folder, sorted.
func oursIn(folder string, intended map[string]Intent) []string {
	var out []string
	for p := range intended {
		if path.Dir(p) == folder {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func joinAll(folder string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = path.Join(folder, n)
	}
	return out
}

// WriteText prints ExecuServe's verdict: one block per folder, one row per window.
func (v *ESView) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s as ExecuServe (ExecuTorch %s) sees it\n", v.Repo, v.Runtime)
	for _, f := range v.Folders {
		if f.Dropped != "" {
			fmt.Fprintf(&b, "\n%s/: not read [%s]: %s\n", f.Folder, f.Rule, f.Dropped)
			continue
		}
		fmt.Fprintf(&b, "\n%s/: read on %s\n", f.Folder, f.RunsOn)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  window\tfile\toffered")
		for _, e := range f.Variants {
			offered := "yes"
			if !e.Offered {
				offered = "no [" + e.Rule + "]: " + e.Dropped
			}
			file := e.File
			if len(e.Files) > 1 {
				file += fmt.Sprintf(" (+%d chunks)", len(e.Files)-1)
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\n", e.Context, file, offered)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	writeList(&b, "problems (publish refuses these)", problemLines(v.Problems))
	writeList(&b, "warnings", v.Warnings)
	_, err := io.WriteString(w, b.String())
	return err
}

func problemLines(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

func writeList(b *strings.Builder, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n" + title + ":\n")
	for _, s := range lines {
		b.WriteString("- " + s + "\n")
	}
}
