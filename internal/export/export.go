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

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// SkipError means this host cannot build the window: the CLI exits 4 and the workflow
// reports the window as skipped.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "export skipped: " + e.Reason }

// Fetcher reads a Hub model in two steps: its metadata and its files by range first
// (config.json and the safetensors headers: what the checks and the window gate need), and
// only once those pass, the files the tools read, downloaded into dir. internal/source
// implements it over the Hub client.
type Fetcher interface {
	// Source is the repo at revision: sha, card, access, and its files for range reads.
	Source(ctx context.Context, id, revision string) (*model.Source, model.Files, error)
	// Fetch downloads the side files, and the safetensors weights when weights is set.
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
	// Calibration is a calibration file a calibrate-only export wrote (QNN): the window is
	// built from it and calibrates nothing.
	Calibration string
	// CalibrateOnly calibrates at the backend's calibration window and writes the encodings
	// to CalibrationOut (with its report beside it), building no program: the workflow's
	// calibrate job, once per model and chip.
	CalibrateOnly  bool
	CalibrationOut string
	// Fallback is a smoke or gate result (--result) that refused this window's quantized
	// file: the export builds the window in fp32 instead, and the report says which file it
	// replaces and why.
	Fallback string
	Out      string
	Work     string
	// KeepWork keeps the work folder (the checkpoint, the tool's files) after success.
	KeepWork bool

	// ConfigDir is the folder Config was loaded from ("" for the embedded one): the gate's
	// fidelity text is read from it for a simulated quality figure (recipe.QDQ).
	ConfigDir string

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
	// Runner is the label of the runner the export runs on, recorded for the cost table.
	Runner string

	// srcDir is where the source's files are: the local folder, or work/source.
	srcDir string
	// fallback is what Fallback's result says of this window, once validated.
	fallback *report.Fallback
	// madeOut and madeWork record the folders Validate created, which a failed export
	// removes again.
	madeOut, madeWork bool
}

// Result is what an export produced.
type Result struct {
	Report     *report.Report
	ReportPath string
}

// Run exports one window. Errors are *InputError (a flag to fix, exit 2), *SkipError
// (exit 4) or anything else (exit 2). Every input is checked before any work starts, and a
// failed export removes the folders it created (the work folder stays with KeepWork).
func Run(ctx context.Context, o Options) (res *Result, err error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = io.Discard
	}
	defer func() {
		if err != nil {
			o.cleanUp()
		}
	}()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	src, err := o.source(ctx)
	if err != nil {
		return nil, err
	}
	if err := o.checkModelWindow(src); err != nil {
		return nil, err
	}
	v, err := o.eligible(src, "")
	if err != nil {
		return nil, err
	}
	g, err := o.gate(src, v.Fam)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "exe-expo: %s to %s at %d tokens (%s)\n", src.ID, o.Backend, g.window, g.reason)
	r, err := backend.Build(o.Config, recipe.Request{
		Backend: o.Backend, Source: src, Verdict: v, Window: g.window, SoC: o.SoC, QMode: o.QMode, Codes: o.Codes, KVCache: g.row.KVCache,
		Calibration: o.Calibration, CalibrationOut: o.CalibrationOut,
		Work: o.Work, SourceDir: o.srcDir, Python: o.Python, MTKPython: o.MTKPython, ExecuTorch: o.ExecuTorch,
	})
	if err != nil {
		return nil, err
	}
	if err := o.checkPrepare(r); err != nil {
		return nil, err
	}
	tc, err := o.checkToolchain(ctx)
	if err != nil {
		return nil, err
	}
	if err := o.download(ctx, src); err != nil {
		return nil, err
	}
	rep := o.newReport(src, v, r, g)
	for k, ver := range tc {
		rep.Toolchain[k] = ver
	}
	if err := o.build(ctx, src, v.Fam, r, rep); err != nil {
		return nil, err
	}
	path := filepath.Join(o.Out, filepath.FromSlash(r.Folder), report.Name(r.Label))
	if o.CalibrateOnly { // the calibration and its report, side by side, for the export jobs to download
		d, err := fileutil.Hash(o.CalibrationOut)
		if err != nil {
			return nil, fmt.Errorf("the %s tool finished and its calibration %s cannot be read: %w", o.Backend, o.CalibrationOut, err)
		}
		rep.Files = append(rep.Files, report.File{Path: filepath.Base(o.CalibrationOut), Bytes: d.Bytes, SHA256: d.SHA256})
		path = filepath.Join(filepath.Dir(o.CalibrationOut), report.Name(r.Label))
	}
	rep.Host.TotalSeconds = round1(time.Since(start).Seconds())
	if err := report.Write(path, rep); err != nil {
		return nil, err
	}
	if !o.KeepWork {
		os.RemoveAll(o.Work)
	}
	return &Result{Report: rep, ReportPath: path}, nil
}

// eligible refuses a model the plan would refuse, or one the backend cannot take; why,
// when set, follows the backend's name in that refusal. The verdict it returns is the
// command's one: the gate, the recipe and the conversion take the family from it.
func (o *Options) eligible(src *model.Source, why string) (*family.Verdict, error) {
	v := backend.Evaluate(o.Config, src)
	if len(v.Reasons) > 0 {
		return nil, fmt.Errorf("%s is not eligible: %s", src.ID, joinReasons(v.Reasons))
	}
	if b := v.Backend(o.Backend); !b.OK {
		return nil, fmt.Errorf("%s cannot be exported to %s%s: %s", src.ID, o.Backend, why, b.Reason)
	}
	return v, nil
}

// cleanUp removes what a failed export created: the work folder (unless KeepWork), and
// the output folder when it is still empty.
func (o *Options) cleanUp() {
	if o.madeWork && !o.KeepWork {
		os.RemoveAll(o.Work)
	}
	if o.madeOut {
		os.Remove(o.Out) // only an empty folder goes
	}
}

func joinReasons(rs []string) string {
	out := rs[0]
	for _, r := range rs[1:] {
		out += "; " + r
	}
	return out
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// source loads the model's metadata: a local folder's files, or a Hub repo's config.json
// and safetensors headers by range. Nothing is downloaded yet.
func (o *Options) source(ctx context.Context) (*model.Source, error) {
	if source.IsDir(o.Model) {
		src, err := source.OpenDir(ctx, o.srcDir, o.ID)
		if err != nil {
			return nil, err
		}
		src.Revision = o.Revision
		return src, nil
	}
	src, files, err := o.Fetcher.Source(ctx, o.Model, o.Revision)
	if err != nil {
		return nil, hubError(o.Model, err)
	}
	if src.AccessError != "" {
		return nil, fmt.Errorf("%s: %s", o.Model, src.AccessError)
	}
	if err := model.Load(ctx, src, files); err != nil {
		return nil, err
	}
	return src, nil
}

// download brings a Hub model's files into srcDir, at the commit its metadata came from.
func (o *Options) download(ctx context.Context, src *model.Source) error {
	if source.IsDir(o.Model) {
		return nil
	}
	rev := src.SHA
	if rev == "" {
		rev = o.Revision
	}
	// A backend whose tool takes another checkpoint and nothing else reads the source's
	// weights needs no safetensors.
	weights := o.spec().Weights
	got, err := o.Fetcher.Fetch(ctx, src.ID, rev, o.srcDir, weights)
	if err != nil {
		return hubError(src.ID, err)
	}
	if got.AccessError != "" {
		return fmt.Errorf("%s: %s", src.ID, got.AccessError)
	}
	return nil
}

// hubError names the model once, and for a Hub this host cannot reach says what to do.
func hubError(id string, err error) error {
	if errors.Is(err, source.ErrUnreachable) {
		return fmt.Errorf("%s cannot be read: %w; give a local model folder, or point HF_ENDPOINT at a Hub this host can reach", id, err)
	}
	return err
}
