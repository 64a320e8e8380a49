package verify

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Audit grades a file already published against its fp32 source, reading only: nothing on
// the Hub is written or deleted.
type Audit struct {
	Hub *hub.Client
	// FetchSource downloads the source (side files and weights) into dir.
	FetchSource func(ctx context.Context, id, dir string) error
	// Repo is the output repo the source publishes to.
	Repo    string
	Backend string
	// Window, when set, picks the file ending -<label>.pte; otherwise the first sorted.
	Window int
	Work   string
	Gate   Gate
	Runner drivers.Runner
}

// AuditResult is what audit prints.
type AuditResult struct {
	Source   string      `json:"source"`
	Repo     string      `json:"repo"`
	Revision string      `json:"revision"`
	File     string      `json:"file"`
	Gate     gate.Result `json:"gate"`
	// Quality is the gate's and the fidelity text's figures for the published file, as the
	// export report's quality block records them.
	Quality gate.Quality `json:"quality"`
}

// Run downloads the source and the published file and gates one against the other.
func (a Audit) Run(ctx context.Context, sourceID string) (AuditResult, error) {
	res := AuditResult{Source: sourceID, Repo: a.Repo}
	info, err := a.Hub.ModelInfo(ctx, a.Repo, hub.InfoOptions{})
	if err != nil {
		return res, fmt.Errorf("read %s: %w", a.Repo, err)
	}
	res.Revision = info.SHA
	var names []string
	for _, s := range info.Siblings {
		names = append(names, s.Path)
	}
	if res.File, err = a.pick(names); err != nil {
		return res, err
	}
	src := filepath.Join(a.Work, "source")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return res, fmt.Errorf("create the audit's work folder %s: %w", a.Work, err)
	}
	if err := a.FetchSource(ctx, sourceID, src); err != nil {
		return res, fmt.Errorf("download %s: %w", sourceID, err)
	}
	pte := filepath.Join(a.Work, "published", path.Base(res.File))
	if err := os.MkdirAll(filepath.Dir(pte), 0o755); err != nil {
		return res, fmt.Errorf("create the audit's work folder %s: %w", a.Work, err)
	}
	if _, err := a.Hub.Download(ctx, a.Repo, res.Revision, res.File, pte); err != nil {
		return res, fmt.Errorf("download %s from %s: %w", res.File, a.Repo, err)
	}
	g := a.Gate
	g.Source = src
	ref, err := g.Reference(ctx, a.Runner, filepath.Join(a.Work, "gate.json"))
	if err != nil {
		return res, err
	}
	if res.Gate, err = g.MeasureFile(ctx, a.Runner, pte, exportllm.KVCacheOfName(res.File), ref); err != nil {
		return res, err
	}
	res.Quality = res.Gate.Quality()
	return res, nil
}

// pick chooses the published program: <backend>/*.pte, the one for the window when given.
func (a Audit) pick(names []string) (string, error) {
	var ptes []string
	for _, n := range names {
		if strings.HasPrefix(n, a.Backend+"/") && strings.HasSuffix(n, ".pte") {
			ptes = append(ptes, n)
		}
	}
	sort.Strings(ptes)
	if a.Window == 0 && len(ptes) > 0 {
		return ptes[0], nil
	}
	suffix := "-" + family.WindowLabel(a.Window) + ".pte"
	for _, p := range ptes {
		if strings.HasSuffix(p, suffix) {
			return p, nil
		}
	}
	if a.Window == 0 {
		return "", fmt.Errorf("%s publishes no %s file (%s/*.pte)", a.Repo, a.Backend, a.Backend)
	}
	return "", fmt.Errorf("%s publishes no %s file for a %d-token window (*%s); it has %s", a.Repo, a.Backend, a.Window, suffix, strings.Join(ptes, ", "))
}
