package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/report"
	hostrun "github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/speed"
	"github.com/experimentalmachines/exe-expo/internal/verify"
)

func speedCommand() Command {
	return Command{
		Name:    "speed",
		Summary: "time an export folder's files through the runner (prefill and decode tokens/s, first token, memory after load) on this host, and flag a file that prefills one token a call",
		Usage:   "OUT [--backend B] [--python P] [--config DIR]",
		Flags:   speedFlags,
	}
}

// speedFlags is the speed command: the workflows run it in the export job, on the runner
// that built the file (ARM for XNNPACK, whose kernels are the phone's), and verify's smoke
// run then keeps the block. It measures again over a block already there.
func speedFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o checkOpts
	fs.StringVar(&o.backend, "backend", "", "time only this backend's reports")
	fs.StringVar(&o.python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with "+pinned.ExecuTorch()+" installed ($EXE_EXPO_PYTHON)")
	fs.StringVar(&o.cfgDir, "config", "", "directory holding pipeline.yaml, versions.env and the fidelity text (default: embedded)")
	return func(env Env, args []string) error {
		if len(args) != 1 {
			return failf(ExitFailed, "speed: give exactly one OUT folder, as export wrote it")
		}
		paths, done, err := reportsToCheck(env, "speed", args[0], o.backend)
		if done {
			return err
		}
		if err := drivers.CheckPython(env.Ctx, o.python, smokeNeeds...); err != nil {
			return failf(ExitFailed, "speed: %w", err)
		}
		s, err := speedRun(o, args[0], true)
		if err != nil {
			return failf(ExitFailed, "speed: %w", err)
		}
		r := drivers.Runner{Python: o.python, Log: env.Stderr}
		return checkReports(env, "speed", args[0], paths, func(path string) (*report.Report, error) {
			rep, err := report.Read(path)
			if err != nil {
				return nil, err
			}
			return rep, s.Measure(env.Ctx, r, args[0], path, rep)
		})
	}
}

// speedRun is the speed run the config folder and this host describe: the fidelity text's
// prompts, speed.refuse_slow_path, and the host facts with the workflow's runner label.
func speedRun(o checkOpts, out string, again bool) (verify.SpeedRun, error) {
	cfg, err := config.Load(o.cfgDir)
	if err != nil {
		return verify.SpeedRun{}, err
	}
	text, err := gate.LoadFidelityText(o.cfgDir, cfg.Gate)
	if err != nil {
		return verify.SpeedRun{}, err
	}
	facts, err := hostrun.Host(out)
	if err != nil {
		return verify.SpeedRun{}, err
	}
	return verify.SpeedRun{Text: text.Text, Host: speed.HostOf(facts, os.Getenv("EXE_EXPO_RUNNER")),
		RefuseSlowPath: cfg.Speed.RefuseSlowPath, Again: again}, nil
}

// smokeSource is the folder whose chat template renders the smoke prompt: src itself when it
// is a folder; a Hub id's tokenizer files and config (no weights) downloaded at revision
// into work/source, so every path that runs smoke, the workflows' verify job and the root
// action among them, prompts the file through the template as the app does.
func smokeSource(env Env, src, revision, work string) (string, error) {
	if src == "" {
		return "", nil
	}
	if info, err := os.Stat(src); err == nil && info.IsDir() {
		return src, nil
	}
	if !model.ValidID(src) {
		return "", fmt.Errorf("--source %s is neither a model folder nor a Hub id such as Qwen/Qwen3-0.6B", src)
	}
	maskTokens(env)
	dir := filepath.Join(work, "source")
	if _, err := env.fetcher().Fetch(env.Ctx, src, revision, dir, false); err != nil {
		return "", fmt.Errorf("download %s@%s's tokenizer and chat template: %w", src, revision, err)
	}
	return dir, nil
}
