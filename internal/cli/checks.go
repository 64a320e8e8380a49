package cli

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/verify"
)

func smokeCommand() Command {
	return Command{
		Name:    "smoke",
		Summary: "check an export folder's files before publish: size against the estimate, and a smoke run where the x86 runner runs them",
		Usage:   "OUT [--backend B] [--source DIR|MODEL_ID [--revision R] [--work DIR]] [--python P]",
		Flags:   smokeFlags,
	}
}

func gateCommand() Command {
	return Command{
		Name:    "gate",
		Summary: "grade an export folder's files against their fp32 source on the decision gate's prompts",
		Usage:   "OUT --source DIR|MODEL_ID [--revision R] [--work DIR] [--backend B] [--reference gate.json] [--python P]",
		Flags:   gateFlags,
	}
}

// checkOpts are the flags smoke and gate share.
type checkOpts struct {
	backend, source, python, cfgDir string
}

func (o *checkOpts) flags(fs *flag.FlagSet, sourceHelp string) {
	fs.StringVar(&o.backend, "backend", "", "check only this backend's reports")
	fs.StringVar(&o.source, "source", "", sourceHelp)
	fs.StringVar(&o.python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with "+pinned.ExecuTorch()+" (and transformers) installed ($EXE_EXPO_PYTHON)")
	fs.StringVar(&o.cfgDir, "config", "", "directory holding pipeline.yaml and versions.env (default: embedded)")
}

func smokeFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o checkOpts
	o.flags(fs, "the source model folder, or its Hub id (tokenizer files downloaded into --work), whose chat template renders the prompt (default: a completion prompt, recorded)")
	revision := fs.String("revision", "main", "Hub revision of a --source given as a Hub id")
	work := fs.String("work", "smoke-work", "folder a --source given as a Hub id is downloaded into")
	return func(env Env, args []string) error {
		if len(args) != 1 {
			return failf(ExitFailed, "smoke: give exactly one OUT folder, as export wrote it")
		}
		paths, done, err := reportsToCheck(env, "smoke", args[0], o.backend)
		if done {
			return err
		}
		if err := drivers.CheckPython(env.Ctx, o.python, smokeNeeds...); err != nil {
			return failf(ExitFailed, "smoke: %w", err)
		}
		src, err := smokeSource(env, o.source, *revision, *work)
		if err != nil {
			return failf(ExitFailed, "smoke: %w", err)
		}
		sp, err := speedRun(o, args[0], false)
		if err != nil {
			return failf(ExitFailed, "smoke: %w", err)
		}
		r := drivers.Runner{Python: o.python, Log: env.Stderr}
		return checkReports(env, "smoke", args[0], paths, func(path string) (*report.Report, error) {
			rep, err := verify.Smoke(env.Ctx, r, args[0], src, path)
			if err != nil {
				return nil, err
			}
			return rep, sp.Measure(env.Ctx, r, args[0], path, rep)
		})
	}
}

// What each command's drivers import: the smoke run loads the file with ExecuTorch's
// runtime (transformers only renders a chat template, and the run falls back without it);
// the gate's probe also reads the tokenizer with transformers and the fp32 model with torch.
var (
	smokeNeeds = []string{drivers.DistExecuTorch}
	gateNeeds  = []string{drivers.DistExecuTorch, drivers.DistTorch, drivers.DistTransformers}
)

func gateFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o checkOpts
	o.flags(fs, "the fp32 source: a model folder, or a Hub id downloaded into --work (weights only when there is no reference yet)")
	ref := fs.String("reference", "", "gate.json to grade against; made from --source when it does not exist (default: OUT/gate.json)")
	revision := fs.String("revision", "main", "Hub revision of a --source given as a Hub id")
	work := fs.String("work", "gate-work", "folder a --source given as a Hub id is downloaded into")
	return func(env Env, args []string) error {
		if len(args) != 1 || o.source == "" {
			return failf(ExitFailed, "gate: give exactly one OUT folder, and the fp32 source with --source")
		}
		g, err := loadGate(o)
		if err != nil {
			return failf(ExitFailed, "gate: %w", err)
		}
		paths, done, err := reportsToCheck(env, "gate", args[0], o.backend)
		if done {
			return err
		}
		if err := drivers.CheckPython(env.Ctx, o.python, gateNeeds...); err != nil {
			return failf(ExitFailed, "gate: %w", err)
		}
		if *ref == "" {
			*ref = filepath.Join(args[0], "gate.json")
		}
		if g.Source, err = gateSource(env, o.source, *revision, *work, *ref); err != nil {
			return failf(ExitFailed, "gate: %w", err)
		}
		r := drivers.Runner{Python: o.python, Log: env.Stderr}
		reference, err := g.Reference(env.Ctx, r, *ref)
		if err != nil {
			return failf(ExitFailed, "gate: %w", err)
		}
		return checkReports(env, "gate", args[0], paths, func(path string) (*report.Report, error) {
			return g.Measure(env.Ctx, r, args[0], path, reference)
		})
	}
}

// gateSource is the folder the gate reads the source from: src itself when it is a folder;
// a Hub id is downloaded into work/source, with its weights only when the fp32 reference
// must still be made (the measure needs the tokenizer and chat template alone).
func gateSource(env Env, src, revision, work, ref string) (string, error) {
	if info, err := os.Stat(src); err == nil && info.IsDir() {
		return src, nil
	}
	if !model.ValidID(src) {
		return "", fmt.Errorf("--source %s is neither a model folder nor a Hub id such as Qwen/Qwen3-0.6B", src)
	}
	_, err := os.Stat(ref)
	weights := errors.Is(err, fs.ErrNotExist)
	maskTokens(env)
	dir := filepath.Join(work, "source")
	if _, err := env.fetcher().Fetch(env.Ctx, src, revision, dir, weights); err != nil {
		return "", fmt.Errorf("download %s@%s: %w", src, revision, err)
	}
	return dir, nil
}

// loadGate is the gate the config folder describes, as solve and audit read it, with the
// fp32 source still to be found.
func loadGate(o checkOpts) (verify.Gate, error) {
	cfg, err := config.Load(o.cfgDir)
	if err != nil {
		return verify.Gate{}, err
	}
	return verify.GateFrom(cfg, o.cfgDir, o.source)
}

// reportsToCheck finds the reports under out before any Python starts, and records the
// windows skipped, as the export results in OUT/results/ record them. done says the command
// is over, with err its end: a folder without reports is refused, and one whose every
// window was skipped has nothing to check and passes (done, with a nil err).
func reportsToCheck(env Env, name, out, backend string) (paths []string, done bool, err error) {
	skipped, err := skippedIn(out)
	if err != nil {
		return nil, true, failf(ExitFailed, "%s: %w", name, err)
	}
	env.outputs().Skipped = skipped
	paths, err = verify.Reports(out, backend)
	if err != nil && len(skipped) > 0 && !hasReports(out) {
		fmt.Fprintf(env.Stdout, "%s: nothing to check: all %d window(s) in %s were skipped\n", name, len(skipped), out)
		return nil, true, nil
	}
	if err != nil {
		return nil, true, failf(ExitFailed, "%s: %w", name, err)
	}
	return paths, false, nil
}

// checkReports runs check on every report reportsToCheck found, prints each report's
// verdicts and adds them to the step summary: nil when nothing blocks publishing, a
// Failure (exit 2) otherwise. The result lists the .pte files and the reports that passed,
// and the windows refused with their file and why (relative to OUT), for the fp32 fallback.
func checkReports(env Env, name, out string, paths []string, check func(path string) (*report.Report, error)) error {
	var md strings.Builder
	var blocked []string
	for _, path := range paths {
		rep, err := check(path)
		if err != nil {
			// a check that could not run refused no file: nothing may fall back on it
			env.outputs().Failed = nil
			return failf(ExitFailed, "%s: %w", name, err)
		}
		lines := verify.Summary(path, rep)
		fmt.Fprintln(env.Stdout, strings.Join(lines, "\n"))
		md.WriteString("- " + lines[0] + "\n")
		for _, l := range lines[1:] {
			md.WriteString("  - " + strings.TrimSpace(l) + "\n")
		}
		if b := rep.Blockers(); len(b) > 0 {
			blocked = append(blocked, fmt.Sprintf("%s: %s", path, strings.Join(b, "; ")))
			env.outputs().Failed = append(env.outputs().Failed, failedWindow(rep, strings.Join(b, "; ")))
			continue
		}
		for _, f := range rep.Files {
			if filepath.Ext(f.Path) == ".pte" {
				env.outputs().Files = append(env.outputs().Files, f.Path)
			}
		}
		if rel, err := filepath.Rel(out, path); err == nil {
			env.outputs().Reports = append(env.outputs().Reports, filepath.ToSlash(rel))
		}
	}
	stepSummary(env, "### "+name+"\n\n"+md.String())
	if len(blocked) > 0 {
		return failf(ExitFailed, "%s: %d of %d file(s) cannot be published: %s", name, len(blocked), len(paths), strings.Join(blocked, " | "))
	}
	return nil
}

// failedWindow is a refused report's window for the result: its first .pte file, the
// recipe's quantization and the checks' reasons.
func failedWindow(rep *report.Report, why string) result.Failed {
	f := result.Failed{Window: rep.Window.Context, Reason: why}
	if rep.TargetName != "" { // a chip backend's file: Target is the chip
		f.SoC = rep.Target
	}
	for _, file := range rep.Files {
		if filepath.Ext(file.Path) == ".pte" {
			f.File = file.Path
			break
		}
	}
	if q, ok := rep.Recipe["qmode"].(string); ok {
		f.QMode = q
	}
	return f
}

// resultsDir is where the generated workflows' export jobs write their results
// (export --result OUT/results/NAME.json), which smoke and gate read for the skipped windows.
const resultsDir = "results"

// skippedIn lists the windows the export results under out/results record as skipped.
func skippedIn(out string) ([]result.Skipped, error) {
	paths, err := filepath.Glob(filepath.Join(out, resultsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var skipped []result.Skipped
	for _, p := range paths {
		r, err := result.Read(p)
		if err != nil {
			return nil, err
		}
		if r.Command == "export" && r.ExitCode == ExitSkipped {
			skipped = append(skipped, r.Outputs.Skipped...)
		}
	}
	return skipped, nil
}

// hasReports tells a folder without any export report from one whose reports are wrong.
func hasReports(out string) bool {
	paths, err := report.Find(out, "", "")
	return err == nil && len(paths) > 0
}
