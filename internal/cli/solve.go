package cli

import (
	"flag"
	"fmt"
	"maps"

	"github.com/experimentalmachines/exe-expo/internal/option"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/solve"
)

func solveCommand() Command {
	return Command{
		Name:    "solve",
		Summary: "solve a model's GPTQ int4 codes once for all its XNNPACK and Vulkan windows, with the fp32 gate reference beside them",
		Usage:   "MODEL --out FILE.pt [--work DIR] [--revision R] [--id ORG/NAME] [--python P] [--config DIR]",
		Flags:   solveFlags,
	}
}

func solveFlags(fs *flag.FlagSet) func(Env, []string) error {
	var o solve.Options
	fs.StringVar(&o.Out, "out", "", "the codes file to write (required), such as codes/codes.pt; gate.json and solve.json go beside it")
	fs.StringVar(&o.Revision, "revision", "main", "Hub revision")
	fs.StringVar(&o.ID, "id", "", "the Hub id a local MODEL folder holds")
	fs.StringVar(&o.Work, "work", "solve-work", "working folder: the download, the checkpoint, the calibration rows")
	fs.StringVar(&o.Python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with "+pinned.ExecuTorch()+" and transformers installed ($EXE_EXPO_PYTHON)")
	fs.StringVar(&o.ConfigDir, "config", "", "directory holding pipeline.yaml and versions.env (default: embedded)")
	return func(env Env, args []string) error {
		if len(args) != 1 {
			return failf(ExitFailed, "solve: give exactly one MODEL: a Hub id or a local model folder")
		}
		o.Model, o.Fetcher, o.Log = args[0], env.fetcher(), env.Stderr
		o.Ready = func() { maskTokens(env) }
		return runSolve(env, o)
	}
}

// solveNames are the command line's names for the solve options a refusal can be about.
// The solve checks its source through export, so export's refusals are worded too.
var solveNames = func() map[option.Field]string {
	m := maps.Clone(exportFlags)
	m[solve.FieldOut], m[solve.FieldConfigDir] = "--out", "--config"
	return m
}()

// runSolve runs the solve and prints its summary, which solve.Run also wrote as
// solve.json; a refusal names the flag to fix, a failure goes to the step summary too.
func runSolve(env Env, o solve.Options) error {
	sum, err := solve.Run(env.Ctx, o)
	if msg, ok := option.Reword(err, solveNames); ok {
		return failf(ExitFailed, "solve: %s", msg)
	}
	if err != nil {
		stepSummary(env, fmt.Sprintf("### GPTQ solve of %s: failed\n\n```\n%v\n```\n", o.Model, err))
		return failf(ExitFailed, "solve failed: %w", err)
	}
	fmt.Fprintln(env.Stdout, string(sum.JSON()))
	if sum.NoCodes != "" {
		stepSummary(env, fmt.Sprintf("### GPTQ solve of %s\n\n%s; fp32 confident on %d of %d gate rows\n", sum.ModelID, sum.NoCodes, sum.GateConfidentRows, sum.GateRows))
		return nil
	}
	stepSummary(env, fmt.Sprintf("### GPTQ solve of %s\n\n%d linears on %d calibration rows (%d positions, %d app rows), %.0f s; fp32 confident on %d of %d gate rows\n",
		sum.ModelID, sum.Linears, sum.CalibrationRows, sum.CalibrationPositions, sum.CalibrationAppRows, sum.Seconds, sum.GateConfidentRows, sum.GateRows))
	return nil
}
