// Package audit grades a file already published on the Hub against its fp32 source on
// the decision gate: it checks the request, reads the gate from the configuration,
// downloads the source and the published file, and measures one against the other. It
// writes nothing to the Hub. The CLI's audit command and any other caller run this flow.
package audit

import (
	"context"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/verify"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Fetcher downloads a Hub model's files into dir, its safetensors weights when weights is
// set; internal/source's Hub implements it (and export.Fetcher embeds it).
type Fetcher interface {
	Fetch(ctx context.Context, id, revision, dir string, weights bool) (*model.Source, error)
}

// Options is one audit request.
type Options struct {
	// Source is the fp32 source model's Hub id; the audited file is in the output repo the
	// configuration names for it.
	Source string
	// Backend is the backend folder of the published file; its files must run on the x86
	// runner the gate runs them on.
	Backend string
	// Window picks the file for that window, in tokens; 0 takes the first file by name.
	Window int
	// Work receives the downloads and gate.json.
	Work string
	// Python has ExecuTorch, torch and transformers installed.
	Python string
	// ConfigDir holds pipeline.yaml, versions.env and the fidelity text ("" for the
	// embedded configuration).
	ConfigDir string
	// Hub lists the output repo and downloads the published file (required).
	Hub *hub.Client
	// Fetcher downloads the source, weights and all, at main (required).
	Fetcher Fetcher
	// Log receives the drivers' output; nil discards it.
	Log io.Writer
	// Ready, when set, is called once the request passed its checks (the python among
	// them), before the first download: the CLI registers the tokens with the Actions
	// runner there, so that a refused request prints its refusal alone.
	Ready func()
}

// Result is what an audit found: the file graded, the repo revision it came from, the
// gate's verdict and the quality figures; the CLI prints it as JSON.
type Result = verify.AuditResult

// gateNeeds are what the gate's probe imports: ExecuTorch's runtime for the file, torch
// and transformers for the fp32 model and the tokenizer.
var gateNeeds = []string{drivers.DistExecuTorch, drivers.DistTorch, drivers.DistTransformers}

// Run checks the request, the configuration and the python before any download, then
// grades the published file. Errors are *InputError (an option to fix) or anything else;
// a file the gate refuses is no error: Result.Gate.Passed says so.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Hub == nil || o.Fetcher == nil {
		return Result{}, errors.New("the audit has no Hub client: set Options.Hub and Options.Fetcher")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := o.check(); err != nil {
		return Result{}, err
	}
	a, err := o.audit(ctx)
	if err != nil {
		return Result{}, err
	}
	if o.Ready != nil {
		o.Ready()
	}
	return a.Run(ctx, o.Source)
}

// audit is the verify.Audit the request describes: the gate from the configuration and
// the output repo it names for Source, once the python can run the gate's probe.
func (o Options) audit(ctx context.Context) (verify.Audit, error) {
	cfg, err := config.Load(o.ConfigDir)
	if err != nil {
		return verify.Audit{}, err
	}
	g, err := verify.GateFrom(cfg, o.ConfigDir, "")
	if err != nil {
		return verify.Audit{}, err
	}
	repo := cfg.RepoFor(path.Base(o.Source))
	if err := model.CheckID("the output repo", repo); err != nil {
		return verify.Audit{}, err
	}
	if err := drivers.CheckPython(ctx, o.Python, gateNeeds...); err != nil {
		return verify.Audit{}, err
	}
	return verify.Audit{Hub: o.Hub, FetchSource: o.fetchSource, Repo: repo, Backend: o.Backend, Window: o.Window,
		Work: o.Work, Gate: g, Runner: drivers.Runner{Python: o.Python, Log: o.Log}}, nil
}

// fetchSource downloads the source with its weights: the reference runs the fp32 model.
func (o Options) fetchSource(ctx context.Context, id, dir string) error {
	_, err := o.Fetcher.Fetch(ctx, id, "main", dir, true)
	return err
}

// smokeBackends names the backends whose files the x86 runner runs: "a, b or c".
func smokeBackends() string {
	var names []string
	for _, b := range backend.All() {
		if b.Smoke {
			names = append(names, b.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
