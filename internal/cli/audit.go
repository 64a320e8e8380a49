package cli

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/audit"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/option"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
)

func auditCommand() Command {
	return Command{
		Name:    "audit",
		Summary: "download a published file and grade it against its fp32 source on the decision gate (read-only; JSON report)",
		Usage:   "SOURCE_MODEL [--backend B] [--context N] [--work DIR] [--python P]",
		Flags:   auditFlags,
	}
}

// auditNames are the command line's names for the audit options a refusal can be about.
var auditNames = map[option.Field]string{audit.FieldSource: "SOURCE_MODEL", audit.FieldBackend: "--backend", audit.FieldWindow: "--context"}

// auditedBackend is the default --backend: the first backend whose files the x86 runner
// runs (the gate can only grade those), as the audit workflow picks it.
func auditedBackend() string {
	for _, b := range backend.Exportable() {
		if b.Smoke {
			return b.Name
		}
	}
	return ""
}

func auditFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o audit.Options
	fs.StringVar(&o.Backend, "backend", auditedBackend(), "backend folder of the published file; its files must run on the x86 runner")
	fs.IntVar(&o.Window, "context", 0, "window of the file to audit, in tokens (default: the first file, sorted by name)")
	fs.StringVar(&o.Work, "work", "audit-work", "working folder for the downloads and gate.json")
	fs.StringVar(&o.Python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with "+pinned.ExecuTorch()+" and transformers installed ($EXE_EXPO_PYTHON)")
	fs.StringVar(&o.ConfigDir, "config", "", "directory holding pipeline.yaml and versions.env (default: embedded)")
	return func(env Env, args []string) error {
		if len(args) != 1 {
			return failf(ExitFailed, "audit: give exactly one SOURCE_MODEL, a Hub id")
		}
		o.Source, o.Hub, o.Fetcher, o.Log = args[0], env.Hub, env.Fetcher, env.Stderr
		o.Ready = func() { maskTokens(env) }
		res, err := audit.Run(env.Ctx, o)
		if err != nil {
			return failf(ExitFailed, "audit: %s", auditRefusal(err))
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		fmt.Fprintln(env.Stderr, res.File+": "+res.Gate.Verdict())
		if !res.Gate.Passed {
			return &Failure{Code: ExitFailed} // the verdict above says why
		}
		return nil
	}
}

// auditRefusal is err's sentence with a refusal in it worded with the command line's
// names for the options.
func auditRefusal(err error) string {
	if msg, ok := option.Reword(err, auditNames); ok {
		return msg
	}
	return err.Error()
}
