// Package release mirrors one published window as a GitHub release of the exe-expo repo,
// for people who fetch files from GitHub rather than the Hub. Files over GitHub's asset
// limit stay on the Hub and the notes say where; a release that exists is updated in place,
// so re-running a workflow never fails on its own earlier release.
package release

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// AssetLimit is GitHub's largest release asset (2 GiB); a file this big or bigger is
// linked on the Hub instead.
const AssetLimit int64 = 2 << 30

// hubURL is where the notes link the output repo.
const hubURL = "https://huggingface.co/"

// Asset is one file to attach.
type Asset struct {
	Name, Path string
	Size       int64
}

// Release is what one window's release holds.
type Release struct {
	Tag, Title, Notes string
	Assets            []Asset
	// TooLarge are the files left on the Hub, by repo path.
	TooLarge []string
}

// ForReport builds the release of the window whose report is at reportPath inside the
// export folder dir: the tag names the model, backend folder, window and source revision
// (e.g. Qwen3-1.7B-xnnpack-4k-abcdef0, Qwen3-0.6B-mtk-mt6989-512-c1899de).
func ForReport(dir, reportPath string) (*Release, error) {
	r, err := report.Read(reportPath)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(dir, reportPath)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("report %s is not inside the export folder %s", reportPath, dir)
	}
	folder := path.Dir(filepath.ToSlash(rel))
	name := r.Source.ID[strings.LastIndex(r.Source.ID, "/")+1:]
	sha := r.Source.SHA
	if len(sha) < 7 {
		return nil, fmt.Errorf("report %s has no source sha (source.sha), which the release tag needs", reportPath)
	}
	label := family.WindowLabel(r.Window.Context)
	out := &Release{Tag: strings.Join([]string{name, strings.ReplaceAll(folder, "/", "-"), label, sha[:7]}, "-")}
	out.Title = out.Tag
	files := append([]string{}, filepath.ToSlash(rel))
	for _, f := range r.Files {
		files = append(files, f.Path)
	}
	if r.Tokenizer != "" {
		files = append(files, r.Tokenizer)
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		st, err := os.Stat(p)
		if err != nil {
			return nil, report.FileError("read", p, err)
		}
		if st.Size() >= AssetLimit {
			out.TooLarge = append(out.TooLarge, f)
			continue
		}
		out.Assets = append(out.Assets, Asset{Name: path.Base(f), Path: p, Size: st.Size()})
	}
	out.Notes = notes(r, out.TooLarge)
	return out, nil
}

func notes(r *report.Report, tooLarge []string) string {
	title := r.Backend
	if b := backend.ByName(r.Backend); b != nil {
		title = b.Title
	}
	sha := r.Source.SHA
	if len(sha) > 12 {
		sha = sha[:12]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s export of [%s](%s%s) at `%s`, window %d tokens, ExecuTorch %s.\n\n", title, r.Source.ID, hubURL, r.Source.ID, sha, r.Window.Context, r.Toolchain["executorch"])
	fmt.Fprintf(&b, "Hugging Face: %s%s\n", hubURL, r.OutputRepo)
	for _, f := range tooLarge {
		fmt.Fprintf(&b, "\n- `%s` is over GitHub's 2 GiB asset limit: download it from Hugging Face: %s%s/blob/main/%s", path.Base(f), hubURL, r.OutputRepo, f)
	}
	if len(tooLarge) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
