package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// A QNN file runs only on a phone's HTP, so the x86 gate cannot measure it. What can run
// here is the quantized program Qualcomm's script saves before lowering (recipe.QDQ): the
// same weights and activation encodings, as quantize/dequantize ops around fp32 arithmetic.
// Its fidelity figures are recorded as simulated, beside "not measured here", never as the
// file's (docs/research/qnn-simulated-quality.md).

// Simulation is one simulated fidelity measure: the QDQ program, the fp32 source folder
// whose weights and tokenizer make the reference, and the fidelity text.
type Simulation struct {
	Runner  drivers.Runner
	Source  string
	Program string
	Text    gate.FidelityText
	// Window bounds the positions read: the saved calibration graph is the window's length
	// and takes no more (with export.qnn.calib_window too, the launcher saves the window's
	// graph carrying the shorter calibration's encodings: e2e TestQNNSharedCalibration).
	Window int
}

// Measure runs fp32 over the text's first tokens (gate_probe.py's reference, as gate.json
// is made, so the same tokens and buckets), then the QDQ program over the same tokens
// (gate_probe.py's "qdq" model), and scores them with gate.CompareFidelity, the gate's own
// definitions of next-token agreement and mean KL.
func (s Simulation) Measure(ctx context.Context) (*gate.SimulatedFidelity, error) {
	text := s.Text
	if s.Window > 0 && text.Tokens > s.Window {
		text.Tokens = s.Window
	}
	plan := drivers.GateProbe{Model: drivers.GateModel{Kind: "hf", Path: s.Source, Tokenizer: s.Source}, Rows: []drivers.GateRow{},
		Fidelity: drivers.FidelityPlan(text)}
	ref, _, err := s.Runner.GateReference(ctx, plan)
	if err != nil {
		return nil, fmt.Errorf("fp32 reference of %s over the fidelity text: %w", s.Source, err)
	}
	ref.Fidelity.Text = text.ID
	plan.Model = drivers.GateModel{Kind: "qdq", Path: s.Program, Tokenizer: s.Source}
	got, _, err := s.Runner.GateMeasure(ctx, plan, nil, ref.Fidelity)
	if err != nil {
		return nil, fmt.Errorf("the QDQ program %s over the fidelity text: %w", s.Program, err)
	}
	f, err := gate.CompareFidelity(*ref.Fidelity, *got.Fidelity, 0)
	if err != nil {
		return nil, fmt.Errorf("the QDQ program %s against fp32: %w", s.Program, err)
	}
	return &gate.SimulatedFidelity{By: gate.QDQOnCPU, Fidelity: f}, nil
}

// MaxSimulatedWindow is the largest window whose QDQ program is run: the calibration graph
// computes every position of the window in one call, so its attention scores take heads ×
// window² × 4 bytes per layer at once (2 GiB for Llama 3.2 1B's 32 heads at 4,096 tokens,
// 8 GiB at 8,192, 32 GiB at 16,384), before the quantize and dequantize copies. Above it the
// quality block says why there is no simulated figure.
const MaxSimulatedWindow = 4096

// SimulatedStage names the simulated measure's entry among the report's tool stages.
const SimulatedStage = "simulated_quality"

// simulate measures the recipe's QDQ program and puts the figure in the report's quality
// block, which stays "not measured" for the file itself.
func (o *Options) simulate(ctx context.Context, r *recipe.Recipe, rep *report.Report) error {
	if _, err := os.Stat(r.QDQ); err != nil {
		return fmt.Errorf("the %s tool finished but its QDQ program, which the simulated quality figure runs on the CPU, is not at %s: %s", r.Backend, r.QDQ, fileutil.Reason(err))
	}
	if r.Window > MaxSimulatedWindow {
		q := notMeasured(r)
		q.SimulatedMissing = fmt.Sprintf("not simulated: the QDQ program computes all %s positions in one call, whose attention is too large to run here (the simulated figure is measured up to %s tokens)",
			family.Commas(int64(r.Window)), family.Commas(MaxSimulatedWindow))
		rep.Quality = &q
		fmt.Fprintf(o.Log, "exe-expo: %s\n", q.SimulatedMissing)
		return nil
	}
	text, err := gate.LoadFidelityText(o.ConfigDir, o.Config.Gate)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "exe-expo: measuring the QDQ program %s on the CPU against fp32 over the fidelity text (simulated quantization)\n", r.QDQ)
	sim := Simulation{Runner: drivers.Runner{Python: o.Python, Dir: filepath.Join(o.Work, "drivers"), Log: o.Log},
		Source: o.srcDir, Program: r.QDQ, Text: text, Window: r.Window}
	start := time.Now()
	f, err := sim.Measure(ctx)
	if err != nil {
		return err
	}
	// Its cost beside the tool's in the report and the step summary: the measure is new on
	// the runners and its time there is not yet known.
	rep.Stages = append(rep.Stages, report.StageReport{Tool: SimulatedStage, Timings: run.Timings{TotalSeconds: round1(time.Since(start).Seconds()), Stages: []run.StageTime{}}})
	q := notMeasured(r)
	q.Simulated = f
	rep.Quality = &q
	fmt.Fprintf(o.Log, "exe-expo: %s\n", q.SimulatedLine())
	return nil
}

// notMeasured is the quality block of a file the x86 gate cannot run (only such a
// backend's recipe names a QDQ program), as verify writes it.
func notMeasured(r *recipe.Recipe) gate.Quality {
	return gate.NotMeasuredHere(backend.ByName(r.Backend).Title)
}
