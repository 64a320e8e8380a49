// Package solve runs the GPTQ solve of one model end to end: the checkpoint conversion,
// the calibration rows continued by the fp32 model, the gate's fp32 reference written
// beside the codes while that model is at hand, the whole-model solve, and solve.json,
// the record of it. The CLI's solve command and any other caller run the same flow.
package solve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/calib"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/verify"
)

// Options is one solve request.
type Options struct {
	// ConfigDir holds pipeline.yaml, versions.env and the gate's fidelity text ("" for
	// the embedded configuration).
	ConfigDir string
	// Model is a Hub id or a local model folder; ID names the Hub id a local folder holds.
	Model, ID, Revision string
	// Out is the codes file to write; gate.json and solve.json go beside it.
	Out string
	// Work holds the download, the checkpoint and the calibration rows.
	Work string
	// Python has ExecuTorch, torch and transformers installed.
	Python string
	// Fetcher reads a Hub model; nil takes local folders only.
	Fetcher export.Fetcher
	// Log receives the progress lines and the tools' output; nil discards them.
	Log io.Writer
	// Ready, when set, is called once the request passed its checks, before the first
	// download or tool run: the CLI registers the tokens with the Actions runner there, so
	// that a refused request prints its refusal alone.
	Ready func()
}

// Result is what a solve made: the CLI prints it as JSON, and Run writes the same JSON
// as solve.json beside the codes.
type Result struct {
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
	// NoCodes says why the solve made the gate's reference alone and no codes (a family
	// optimum-executorch builds: its export takes none); empty when it made codes.
	NoCodes string `json:"no_codes,omitempty"`
}

// JSON is the result as solve.json holds it (and the CLI prints it): indented, without
// the final newline.
func (r Result) JSON() []byte {
	b, _ := json.MarshalIndent(r, "", "  ") // plain numbers and strings: cannot fail
	return b
}

// Run converts the model, builds the calibration rows with the fp32 model, writes the
// gate's fp32 reference (the rows and the fidelity text) beside the codes while that
// model is at hand, solves, and writes solve.json. Errors are *InputError (Out or
// ConfigDir to fix), *export.InputError (the model, ID, Work or Python to fix; nothing
// was downloaded) or anything else (the solve failed). A failure leaves no solve.json.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	codes, err := o.checkOut()
	if err != nil {
		return Result{}, err
	}
	cfg, err := config.Load(o.ConfigDir)
	if err != nil {
		return Result{}, refuse(FieldConfigDir, "%v", err)
	}
	if o.Ready != nil {
		o.Ready()
	}
	start := time.Now()
	g, err := verify.GateFrom(cfg, o.ConfigDir, "")
	if err != nil {
		return Result{}, err
	}
	ck, err := export.PrepareCheckpoint(ctx, export.Options{Config: cfg, Model: o.Model, ID: o.ID,
		Revision: o.Revision, Work: o.Work, Python: o.Python, Fetcher: o.Fetcher, Log: o.Log})
	if err != nil {
		return Result{}, err
	}
	r := drivers.Runner{Python: o.Python, Dir: filepath.Join(ck.Work, "drivers"), Log: o.Log}
	gatePath := filepath.Join(filepath.Dir(o.Out), "gate.json")
	sum := Result{ModelID: ck.Source.ID, Revision: o.Revision, SHA: ck.Source.SHA, Gate: gatePath}
	if ck.Checkpoint == "" {
		// a route that takes no codes (optimum-executorch's): the gate's fp32 reference
		// alone, which the workflow's verify job grades every file against; the export job
		// builds without codes
		sum.NoCodes = "no GPTQ codes: " + ck.Source.ID + " is exported by " + family.RouteOptimum + ", which takes none; the gate's fp32 reference alone"
		fmt.Fprintf(o.Log, "exe-expo: %s\n", sum.NoCodes)
	}
	var set calib.Set
	var rows string
	if sum.NoCodes == "" {
		if set, rows, err = calibrate(ctx, o.Log, r, ck, cfg, g.Prompt); err != nil {
			return Result{}, err
		}
	}
	g.Source = ck.Dir
	ref, err := g.Reference(ctx, r, gatePath)
	if err != nil {
		return Result{}, err
	}
	sum.GateRows, sum.GateConfidentRows, sum.GateFidelityPositions = len(ref.Rows), len(ref.Confident), fidelityPositions(ref)
	if sum.NoCodes == "" {
		if err := solveInto(ctx, o, r, ck, cfg, set, rows, codes, &sum); err != nil {
			return Result{}, err
		}
	}
	sum.Seconds = time.Since(start).Seconds()
	if err := report.WriteAtomic(filepath.Join(filepath.Dir(o.Out), "solve.json"), append(sum.JSON(), '\n')); err != nil {
		return Result{}, err
	}
	return sum, nil
}

// solveInto solves the codes on the calibration set and records them in sum.
func solveInto(ctx context.Context, o Options, r drivers.Runner, ck *export.Checkpoint, cfg *config.Config, set calib.Set, rows, codes string, sum *Result) error {
	res, err := solveCodes(ctx, o.Log, r, ck, cfg, rows, codes)
	if err != nil {
		return err
	}
	if res.Positions != set.Positions || res.Rows != len(set.Rows) {
		return fmt.Errorf("%s counted %d rows and %d positions; the calibration has %d and %d",
			drivers.SolveModelScript, res.Rows, res.Positions, len(set.Rows), set.Positions)
	}
	sum.Codes, sum.Linears, sum.CalibrationRows, sum.CalibrationPositions = res.Out, len(res.Linears), res.Rows, res.Positions
	sum.CalibrationAppRows, sum.CalibrationHead, sum.EmptyReplies = set.AppRows, set.Head, len(set.Empty)
	sum.Damp = cfg.Export.Solve.Damp
	return nil
}

func fidelityPositions(ref gate.Reference) int {
	if ref.Fidelity == nil {
		return 0
	}
	return len(ref.Fidelity.Positions)
}
