package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path"

	"github.com/experimentalmachines/exe-expo/pkg/backend"
	"github.com/experimentalmachines/exe-expo/pkg/drivers"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/verify"
)

// auditSource downloads the source model with its weights; tests replace it.
var auditSource = func(env Env) func(ctx context.Context, id, dir string) error {
	return func(ctx context.Context, id, dir string) error {
		_, err := hubSource(env).Fetch(ctx, id, "main", dir, true)
		return err
	}
}

func init() {
	register(Command{
		Name:    "audit",
		Summary: "download a published file and grade it against its fp32 source on the decision gate (read-only; JSON report)",
		Usage:   "SOURCE_MODEL [--backend B] [--context N] [--work DIR] [--python P]",
		Flags:   auditFlags,
	})
}

func auditFlags(fs *flag.FlagSet) func(Env, []string) int {
	var o checkOpts
	var window int
	var work string
	fs.StringVar(&o.backend, "backend", "xnnpack", "backend folder of the published file; its files must run on the x86 runner")
	fs.IntVar(&window, "context", 0, "window of the file to audit, in tokens (default: the first file, sorted by name)")
	fs.StringVar(&work, "work", "audit-work", "working folder for the downloads and gate.json")
	fs.StringVar(&o.python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with ExecuTorch 1.4.0 and transformers installed ($EXE_EXPO_PYTHON)")
	fs.StringVar(&o.cfgDir, "config", "", "directory holding pipeline.yaml and versions.env (default: embedded)")
	return func(env Env, args []string) int {
		if len(args) != 1 {
			return env.failf(ExitFailed, "audit: give exactly one SOURCE_MODEL, a Hub id")
		}
		if err := model.CheckID("SOURCE_MODEL", args[0]); err != nil {
			return env.failf(ExitFailed, "audit: %v", err)
		}
		if window < 0 {
			return env.failf(ExitFailed, "audit: --context %d: a window is a positive number of tokens (0: the first file)", window)
		}
		if b := backend.ByName(o.backend); b == nil || !b.Smoke {
			return env.failf(ExitFailed, "audit: --backend %s: the gate runs files on ExecuTorch's x86 runner, which runs only %s files", o.backend, smokeBackends())
		}
		g, cfg, err := loadGate(o)
		if err == nil {
			err = model.CheckID("the output repo", cfg.RepoFor(path.Base(args[0])))
		}
		if err != nil {
			return env.failf(ExitFailed, "audit: %v", err)
		}
		if err := drivers.CheckPython(env.Ctx, o.python, gateNeeds...); err != nil {
			return env.failf(ExitFailed, "audit: %v", err)
		}
		maskTokens(env)
		a := verify.Audit{Hub: hub.New(hub.Options{UserAgent: "exe-expo"}), FetchSource: auditSource(env),
			Repo: cfg.RepoFor(path.Base(args[0])), Backend: o.backend, Window: window, Work: work, Gate: g,
			Runner: drivers.Runner{Python: o.python, Log: env.Stderr}}
		res, err := a.Run(env.Ctx, args[0])
		if err != nil {
			return env.failf(ExitFailed, "audit: %v", err)
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		fmt.Fprintln(env.Stderr, res.File+": "+res.Gate.Verdict())
		if !res.Gate.Passed {
			return ExitFailed
		}
		return ExitOK
	}
}

// smokeBackends names the backends whose files the x86 runner runs.
func smokeBackends() string {
	var names []string
	for _, b := range backend.All() {
		if b.Smoke {
			names = append(names, b.Name)
		}
	}
	return words(names, "or")
}
