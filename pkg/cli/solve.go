package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/calib"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/drivers"
	"github.com/experimentalmachines/exe-expo/pkg/export"
	"github.com/experimentalmachines/exe-expo/pkg/gate"
	"github.com/experimentalmachines/exe-expo/pkg/report"
)

func init() {
	register(Command{
		Name:    "solve",
		Summary: "solve a model's GPTQ int4 codes once for all its XNNPACK and Vulkan windows, with the fp32 gate reference beside them",
		Usage:   "MODEL --out FILE.pt [--work DIR] [--revision R] [--id ORG/NAME] [--python P] [--config DIR]",
		Flags:   solveFlags,
	})
}

// solveSummary is the solve's JSON on stdout, also written as solve.json beside the codes.
type solveSummary struct {
	ModelID              string  `json:"model_id"`
	Revision             string  `json:"revision"`
	SHA                  string  `json:"sha,omitempty"`
	Codes                string  `json:"codes"`
	Gate                 string  `json:"gate"`
	Linears              int     `json:"linears"`
	CalibrationRows      int     `json:"calibration_rows"`
	CalibrationPositions int     `json:"calibration_positions"`
	CalibrationAppRows   int     `json:"calibration_app_rows"`
	CalibrationHead      int     `json:"calibration_head_tokens"`
	EmptyReplies         int     `json:"calibration_empty_replies"`
	Seconds              float64 `json:"seconds"`
	Damp                 float64 `json:"damp"`
	GateRows             int     `json:"gate_rows"`
	GateConfidentRows    int     `json:"gate_confident_rows"`
	// GateFidelityPositions are the positions of the fidelity text gate.json holds fp32's
	// distribution at (0 for a reference made before the text was configured).
	GateFidelityPositions int `json:"gate_fidelity_positions"`
}

func solveFlags(fs *flag.FlagSet) func(Env, []string) int {
	var o export.Options
	out := fs.String("out", "", "the codes file to write (required), such as codes/codes.pt; gate.json and solve.json go beside it")
	fs.StringVar(&o.Revision, "revision", "main", "Hub revision")
	fs.StringVar(&o.ID, "id", "", "the Hub id a local MODEL folder holds")
	fs.StringVar(&o.Work, "work", "solve-work", "working folder: the download, the checkpoint, the calibration rows")
	fs.StringVar(&o.Python, "python", envOr("EXE_EXPO_PYTHON", "python3"), "python with ExecuTorch 1.4.0 and transformers installed ($EXE_EXPO_PYTHON)")
	cfgDir := fs.String("config", "", "directory holding pipeline.yaml and versions.env (default: embedded)")
	return func(env Env, args []string) int {
		if len(args) != 1 {
			return env.failf(ExitFailed, "solve: give exactly one MODEL: a Hub id or a local model folder")
		}
		if err := checkCodesPath(*out); err != nil {
			return env.failf(ExitFailed, "solve: %v", err)
		}
		cfg, err := config.Load(*cfgDir)
		if err == nil {
			o.Fetcher, err = newFetcher(env)
		}
		if err != nil {
			return env.failf(ExitFailed, "solve: %v", err)
		}
		maskTokens(env)
		o.Model, o.Config, o.Log = args[0], cfg, env.Stderr
		return runSolve(env, o, *out, *cfgDir)
	}
}

// checkCodesPath refuses an --out that is missing or names a folder, and creates the
// folder it goes in, before any download.
func checkCodesPath(out string) error {
	if out == "" {
		return errors.New("--out is required: the codes file to write, such as codes/codes.pt")
	}
	if info, err := os.Stat(out); err == nil && info.IsDir() {
		return fmt.Errorf("--out %s is a folder: give the codes file to write, such as %s", out, filepath.Join(out, "codes.pt"))
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("--out %s: its folder cannot be created: %s", out, report.Reason(err))
	}
	return nil
}

func runSolve(env Env, o export.Options, out, cfgDir string) int {
	sum, err := solve(env, o, out, cfgDir)
	var input *export.InputError
	switch {
	case errors.As(err, &input):
		return env.failf(ExitFailed, "solve: %s", refusal(err, input))
	case err != nil:
		stepSummary(env, fmt.Sprintf("### GPTQ solve of %s: failed\n\n```\n%v\n```\n", o.Model, err))
		return env.failf(ExitFailed, "solve failed: %v", err)
	}
	b, _ := json.MarshalIndent(sum, "", "  ")
	if err := report.WriteAtomic(filepath.Join(filepath.Dir(out), "solve.json"), append(b, '\n')); err != nil {
		return env.failf(ExitFailed, "solve failed: %v", err)
	}
	fmt.Fprintln(env.Stdout, string(b))
	stepSummary(env, fmt.Sprintf("### GPTQ solve of %s\n\n%d linears on %d calibration rows (%d positions, %d app rows), %.0f s; fp32 confident on %d of %d gate rows\n",
		sum.ModelID, sum.Linears, sum.CalibrationRows, sum.CalibrationPositions, sum.CalibrationAppRows, sum.Seconds, sum.GateConfidentRows, sum.GateRows))
	return ExitOK
}

// solve converts the model, builds the calibration rows with the fp32 model, writes the
// gate's fp32 reference (the rows and the fidelity text) beside the codes while that model
// is at hand, and solves. cfgDir is the config folder the fidelity text is read from.
func solve(env Env, o export.Options, out, cfgDir string) (solveSummary, error) {
	start := time.Now()
	cfg := o.Config
	g, err := gateFrom(cfg, cfgDir, "")
	if err != nil {
		return solveSummary{}, err
	}
	prompt := g.Prompt
	ck, err := export.PrepareCheckpoint(env.Ctx, o)
	if err != nil {
		return solveSummary{}, err
	}
	r := drivers.Runner{Python: o.Python, Dir: filepath.Join(ck.Work, "drivers"), Log: env.Stderr}
	set, rows, err := calibrate(env, r, ck, cfg, prompt)
	if err != nil {
		return solveSummary{}, err
	}
	gatePath := filepath.Join(filepath.Dir(out), "gate.json")
	g.Source = ck.Dir
	ref, err := g.Reference(env.Ctx, r, gatePath)
	if err != nil {
		return solveSummary{}, err
	}
	res, err := solveCodes(env, r, ck, cfg, rows, out)
	if err != nil {
		return solveSummary{}, err
	}
	if res.Positions != set.Positions || res.Rows != len(set.Rows) {
		return solveSummary{}, fmt.Errorf("%s counted %d rows and %d positions; the calibration has %d and %d",
			drivers.SolveModelScript, res.Rows, res.Positions, len(set.Rows), set.Positions)
	}
	return solveSummary{
		ModelID: ck.Source.ID, Revision: o.Revision, SHA: ck.Source.SHA, Codes: res.Out, Gate: gatePath,
		Linears: len(res.Linears), CalibrationRows: res.Rows, CalibrationPositions: res.Positions,
		CalibrationAppRows: set.AppRows, CalibrationHead: set.Head, EmptyReplies: len(set.Empty),
		Seconds: time.Since(start).Seconds(), Damp: cfg.Export.Solve.Damp,
		GateRows: len(ref.Rows), GateConfidentRows: len(ref.Confident), GateFidelityPositions: fidelityPositions(ref),
	}, nil
}

func fidelityPositions(ref gate.Reference) int {
	if ref.Fidelity == nil {
		return 0
	}
	return len(ref.Fidelity.Positions)
}

// calibrate runs the fp32 model over the calibration rows and writes the solve's rows file
// into the work folder.
func calibrate(env Env, r drivers.Runner, ck *export.Checkpoint, cfg *config.Config, prompt gate.Prompt) (calib.Set, string, error) {
	plan := calib.Plan(cfg.Calibration, cfg.Gate.Trailer)
	fmt.Fprintf(env.Stderr, "exe-expo: continuing %d calibration rows with %s's fp32 replies\n", len(plan), ck.Source.ID)
	replies, _, err := r.CalibRows(env.Ctx, drivers.CalibRows{Model: ck.Dir, Prompt: prompt, Rows: plan})
	if err != nil {
		return calib.Set{}, "", fmt.Errorf("calibration rows of %s: %w", ck.Source.ID, err)
	}
	set, err := calib.Assemble(plan, replies, cfg.Calibration.PromptLimit)
	if err != nil {
		return calib.Set{}, "", fmt.Errorf("calibration rows of %s: %w", ck.Source.ID, err)
	}
	b, err := json.Marshal(set.Rows)
	if err != nil {
		return calib.Set{}, "", fmt.Errorf("encode the calibration rows: %w", err)
	}
	path := filepath.Join(ck.Work, "calibration-rows.json")
	return set, path, report.WriteAtomic(path, b)
}

// solveCodes runs the whole-model solve on the rows file, on the grid the export_llm
// recipes quantize with.
func solveCodes(env Env, r drivers.Runner, ck *export.Checkpoint, cfg *config.Config, rows, out string) (drivers.SolveModelResult, error) {
	blocks, err := drivers.PlanBlocks(int(ck.Arch.Layers), ck.Arch.LayerTypes)
	if err != nil {
		return drivers.SolveModelResult{}, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return drivers.SolveModelResult{}, fmt.Errorf("--out %s: %w", out, err)
	}
	grid := drivers.DefaultGrid()
	grid.Damp, grid.GroupSize = cfg.Export.Solve.Damp, cfg.Export.XNNPACK.GroupSize
	fmt.Fprintf(env.Stderr, "exe-expo: solving %d blocks of %s\n", len(blocks), ck.Source.ID)
	res, err := r.SolveModel(env.Ctx, drivers.SolveModel{Out: abs, Rows: rows, Grid: grid, Blocks: blocks,
		Model: drivers.EagerModel{ModelClass: ck.ModelClass, Params: ck.Params, Checkpoint: ck.Checkpoint,
			MaxSeqLength: calib.MaxSeqLength, LFM2StateFix: ck.LFM2}})
	if err != nil {
		return res, fmt.Errorf("GPTQ solve of %s: %w", ck.Source.ID, err)
	}
	return res, nil
}
