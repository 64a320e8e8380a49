// Package export runs one export end to end: the window gate, the source files, the
// checkpoint conversion, the backend's tool, the read-back of every file and the export
// report. A window this host cannot build is a Skip (exit 4), never a failure.
package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/recipe"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/run"
)

// SkipError means this host cannot build the window: the CLI exits 4 and the workflow
// reports the window as skipped.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "export skipped: " + e.Reason }

// Fetcher brings a Hub model's files into dir (weights only when weights is true) and
// returns its metadata. The Hub client implements it; a local folder needs none.
type Fetcher interface {
	Fetch(ctx context.Context, id, revision, dir string, weights bool) (*model.Source, error)
}

// Options is one export request.
type Options struct {
	Config  *config.Config
	Backend string
	Model   string // Hub id or local folder
	// ID names the Hub id a local folder holds (the QNN registry and the output repo go by
	// it); default: the folder's name.
	ID       string
	Revision string
	// Window is the context window; 0 picks the largest this host can build (XNNPACK,
	// Vulkan), qnn.max_context_len (QNN) or mediatek.cache_size (MediaTek).
	Window int
	SoC    string
	QMode  string
	Codes  string
	Out    string
	Work   string
	// KeepWork keeps the work folder (the checkpoint, the tool's files) after success.
	KeepWork bool

	Python, MTKPython, ExecuTorch string
	Fetcher                       Fetcher
	Log                           io.Writer
	// Timeout bounds each tool run; 0 means none.
	Timeout time.Duration
	// SampleEvery is the memory sampling interval (0: the runner's default).
	SampleEvery time.Duration
	// Host overrides the host facts (tests); nil reads /proc.
	Host func(dir string) (run.HostFacts, error)
	// RunURL and RunID link the report to the workflow run.
	RunURL, RunID string

	// srcDir is where the source's files are: the local folder, or work/source.
	srcDir string
}

// Result is what an export produced.
type Result struct {
	Report     *report.Report
	ReportPath string
}

// Run exports one window. Errors are *SkipError (exit 4) or anything else (exit 2).
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	src, err := o.source(ctx)
	if err != nil {
		return nil, err
	}
	v := family.Evaluate(o.Config, src)
	if len(v.Reasons) > 0 {
		return nil, fmt.Errorf("%s is not eligible: %s", src.ID, joinReasons(v.Reasons))
	}
	if b := v.Backend(o.Backend); !b.OK {
		return nil, fmt.Errorf("%s cannot be exported to %s: %s", src.ID, o.Backend, b.Reason)
	}
	g, err := o.gate(src)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "exe-expo: %s to %s at %d tokens (%s)\n", src.ID, o.Backend, g.window, g.reason)
	r, err := recipe.Build(o.Config, recipe.Request{
		Backend: o.Backend, Source: src, Window: g.window, SoC: o.SoC, QMode: o.QMode, Codes: o.Codes,
		Work: o.Work, SourceDir: o.srcDir, Python: o.Python, MTKPython: o.MTKPython, ExecuTorch: o.ExecuTorch,
	})
	if err != nil {
		return nil, err
	}
	tc, err := o.checkToolchain(ctx)
	if err != nil {
		return nil, err
	}
	rep := o.newReport(src, v, r, g)
	for k, ver := range tc {
		rep.Toolchain[k] = ver
	}
	if err := o.build(ctx, src, r, rep); err != nil {
		return nil, err
	}
	rep.Host.TotalSeconds = round1(time.Since(start).Seconds())
	path := filepath.Join(o.Out, filepath.FromSlash(r.Folder), report.Name(r.Label))
	if err := report.Write(path, rep); err != nil {
		return nil, err
	}
	if !o.KeepWork {
		os.RemoveAll(o.Work)
	}
	return &Result{Report: rep, ReportPath: path}, nil
}

func (o *Options) validate() error {
	switch o.Backend {
	case "xnnpack", "vulkan", "qnn", "mediatek":
	default:
		return fmt.Errorf("unknown backend %q (xnnpack, vulkan, qnn, mediatek)", o.Backend)
	}
	if (o.Backend == "qnn" || o.Backend == "mediatek") && o.SoC == "" {
		return fmt.Errorf("--soc is required for %s", o.Backend)
	}
	if o.Out == "" || o.Work == "" {
		return fmt.Errorf("--out and --work are required")
	}
	var err error
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return err
	}
	if o.Work, err = filepath.Abs(o.Work); err != nil {
		return err
	}
	if o.Work == o.Out {
		return fmt.Errorf("--work and --out must differ: the work folder is removed after a success")
	}
	if o.Revision == "" {
		o.Revision = "main"
	}
	o.srcDir = filepath.Join(o.Work, "source")
	if plan.IsDir(o.Model) {
		if o.srcDir, err = filepath.Abs(o.Model); err != nil {
			return err
		}
	}
	return nil
}

func joinReasons(rs []string) string {
	out := rs[0]
	for _, r := range rs[1:] {
		out += "; " + r
	}
	return out
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// source loads the model's metadata; a Hub model's files are downloaded into srcDir.
func (o *Options) source(ctx context.Context) (*model.Source, error) {
	if plan.IsDir(o.Model) {
		src, err := plan.OpenDir(ctx, o.srcDir, o.ID)
		if err != nil {
			return nil, err
		}
		src.Revision = o.Revision
		return src, nil
	}
	dir := o.srcDir
	if !model.ValidID(o.Model) {
		return nil, fmt.Errorf("%q is neither a local model folder nor a Hugging Face model id (org/name)", o.Model)
	}
	if o.Fetcher == nil {
		return nil, fmt.Errorf("%s: no Hub client to download it with; give a local folder", o.Model)
	}
	weights := o.Backend == "xnnpack" || o.Backend == "vulkan" || o.Backend == "mediatek"
	src, err := o.Fetcher.Fetch(ctx, o.Model, o.Revision, dir, weights)
	if err != nil {
		return nil, err
	}
	if src.AccessError != "" {
		return nil, errors.New(src.AccessError)
	}
	if src.Config == nil {
		if err := model.Load(ctx, src, model.Dir(dir)); err != nil {
			return nil, err
		}
	}
	return src, nil
}
