package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/option"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/result"
	toolrun "github.com/experimentalmachines/exe-expo/internal/run"
)

func exportCommand() Command {
	return Command{
		Name:    "export",
		Summary: "export one model to one backend at one window (and chip), with its report",
		Usage:   "--backend " + strings.Join(exportable(), "|") + " MODEL --out DIR --work DIR [--context N] [--soc CHIP] [--codes FILE] [--calibration FILE | --calibrate-only --calibration-out FILE] [--revision R]",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			var o export.Options
			fs.StringVar(&o.Backend, "backend", "", words(exportable(), "or")+" (required)")
			fs.IntVar(&o.Window, "context", 0, "context window in tokens, one of the windows plan lists (default: the largest this host can build within the model's limit; QNN and MediaTek: their configured window)")
			fs.StringVar(&o.SoC, "soc", "", "target chip, required for qnn and mediatek: one of export.qnn.socs or export.mediatek.socs in pipeline.yaml")
			fs.StringVar(&o.Codes, "codes", "", "GPTQ codes file from the solve job, "+words(backend.LLMNames(), "and")+" only (default: round to nearest)")
			fs.StringVar(&o.QMode, "qmode", "", "override the "+words(backend.LLMNames(), "or")+" recipe's qmode: fp32 builds the unquantized reference")
			fs.StringVar(&o.Calibration, "calibration", "", "qnn: build the window from this calibration file (written by --calibrate-only for the same model, chip and ExecuTorch) instead of calibrating; the report gives its sha256")
			fs.BoolVar(&o.CalibrateOnly, "calibrate-only", false, "qnn: calibrate once at export.qnn.calib_window and write the encodings to --calibration-out (its report beside it), building no .pte: every window of this model and chip can then be built from it with --calibration")
			fs.StringVar(&o.CalibrationOut, "calibration-out", "", "with --calibrate-only: the calibration file to write")
			fs.StringVar(&o.Fallback, "fallback", "", "a gate (or smoke) --result file that refused this window's quantized file: build the window in fp32 instead, saying so in the report")
			fs.StringVar(&o.ID, "id", "", "the Hub id a local MODEL folder holds (names the output repo; the QNN registry goes by it)")
			fs.StringVar(&o.Revision, "revision", "main", "Hub revision")
			fs.StringVar(&o.Out, "out", "out", "folder that receives the published layout (backend folders, tokenizer, reports)")
			fs.StringVar(&o.Work, "work", "work", "working folder, removed after a success unless --keep-work")
			fs.BoolVar(&o.KeepWork, "keep-work", false, "keep the working folder")
			fs.StringVar(&o.Python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with "+pinned.ExecuTorch()+" installed ($EXE_EXPO_PYTHON)")
			fs.StringVar(&o.MTKPython, "mtk-python", os.Getenv("MTK_PYTHON"), "python of the MediaTek tool virtualenv ($MTK_PYTHON)")
			fs.StringVar(&o.ExecuTorch, "executorch", os.Getenv("EXECUTORCH_SRC"), "ExecuTorch source tree at EXECUTORCH_COMMIT, for QNN params and examples/mediatek ($EXECUTORCH_SRC)")
			fs.DurationVar(&o.Timeout, "timeout", 0, "kill a tool that runs longer than this (0: no limit)")
			cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: embedded)")
			return func(env Env, args []string) error {
				if len(args) != 1 {
					return failf(ExitFailed, "export: give exactly one MODEL: a Hub id or a local model folder")
				}
				o.Model = args[0]
				cfg, err := config.Load(*cfgDir)
				if err != nil {
					return failf(ExitFailed, "export: %w", err)
				}
				o.Config, o.ConfigDir, o.Fetcher = cfg, *cfgDir, env.fetcher()
				maskTokens(env)
				o.Log = env.Stderr
				o.RunURL, o.RunID = actionsRun()
				o.Runner = os.Getenv("EXE_EXPO_RUNNER")
				return runExport(env, o)
			}
		},
	}
}

// exportFlags are the flags that set each export option. Export's refusals name options
// by field; the CLI words them as the flags the user typed (FieldWindow is --context).
var exportFlags = map[option.Field]string{
	export.FieldModel: "MODEL", export.FieldID: "--id", export.FieldBackend: "--backend", export.FieldSoC: "--soc",
	export.FieldWindow: "--context", export.FieldQMode: "--qmode", export.FieldCodes: "--codes", export.FieldTimeout: "--timeout",
	export.FieldPython: "--python", export.FieldMTKPython: "--mtk-python", export.FieldExecuTorch: "--executorch",
	export.FieldOut: "--out", export.FieldWork: "--work", export.FieldFallback: "--fallback",
	export.FieldCalibration: "--calibration", export.FieldCalibrateOnly: "--calibrate-only", export.FieldCalibrationOut: "--calibration-out",
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// actionsRun links the report to the workflow run, when there is one.
func actionsRun() (url, id string) {
	id = os.Getenv("GITHUB_RUN_ID")
	if id == "" {
		return "", ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%s", envOr("GITHUB_SERVER_URL", "https://github.com"), os.Getenv("GITHUB_REPOSITORY"), id), id
}

func runExport(env Env, o export.Options) error {
	start := time.Now()
	res, err := export.Run(env.Ctx, o)
	code := export.ExitCode(err)
	var input *export.InputError
	switch {
	case code == ExitOK:
	case errors.As(err, &input):
		msg, _ := option.Reword(err, exportFlags)
		stepSummary(env, fmt.Sprintf("### %s → %s: refused\n\n%s\n", o.Model, o.Backend, msg))
		return failf(code, "export: %s", msg)
	case code == ExitSkipped:
		if inActions() {
			actionsFor(env).Warningf("%s cannot be exported on this runner: %v", o.Model, err)
		}
		stepSummary(env, fmt.Sprintf("### %s → %s: window skipped\n\n%v\n", o.Model, o.Backend, err))
		env.outputs().Skipped = []result.Skipped{{Window: o.Window, SoC: o.SoC, Reason: skipReason(err)}}
		return failf(code, "%w", err)
	default:
		stepSummary(env, fmt.Sprintf("### %s → %s: failed\n\n```\n%v\n%s```\n", o.Model, o.Backend, err, toolTail(err)))
		return failf(code, "export failed: %w", err)
	}
	stepSummary(env, exportSummary(res.Report))
	paths := make([]string, 0, len(res.Report.Files))
	for _, f := range res.Report.Files {
		paths = append(paths, f.Path)
	}
	out, _ := json.MarshalIndent(map[string]any{
		"files": paths, "window": res.Report.Window.Context, "report": res.ReportPath,
		"seconds": time.Since(start).Seconds(),
	}, "", "  ")
	fmt.Fprintln(env.Stdout, string(out))
	exportOutputs(env.outputs(), res)
	return nil
}

// exportOutputs records the .pte files the export made (relative to its out folder) and
// its report.
func exportOutputs(o *result.Outputs, res *export.Result) {
	for _, f := range res.Report.Files {
		if path.Ext(f.Path) == ".pte" {
			o.Files = append(o.Files, f.Path)
		}
	}
	o.Report = res.ReportPath
}

// skipReason is why a window was skipped, without the "export skipped" the log line adds.
func skipReason(err error) string {
	var skip *export.SkipError
	if errors.As(err, &skip) {
		return skip.Reason
	}
	return err.Error()
}

// toolTail is the failed tool's last lines for the step summary, where a reader has no
// scrolling log at hand; the error's own sentence names only the exception.
func toolTail(err error) string {
	var tail []string
	var exit *toolrun.ExitError
	var timeout *toolrun.TimeoutError
	switch {
	case errors.As(err, &exit):
		tail = exit.Tail
	case errors.As(err, &timeout):
		tail = timeout.Tail
	}
	if len(tail) == 0 {
		return ""
	}
	return fmt.Sprintf("\nits last %d lines:\n%s\n", len(tail), strings.Join(tail, "\n"))
}
