package gate

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/family"
)

// Quality is how far a file is from its fp32 source, in one block the export report, the
// audit, config.json and the model card read (docs/research/quality.md): the decision
// gate's figures and the fidelity text's, or why none was measured.
type Quality struct {
	// Measured says the gate ran on the file here; NotMeasured says why not (a backend
	// ExecuTorch's x86 runner cannot run: "not measured here: Vulkan (GPU) needs a phone").
	Measured    bool   `json:"measured"`
	NotMeasured string `json:"not_measured,omitempty"`

	// The gate's figures (Result): on the rows fp32 is confident on, the mean probability
	// fp32 and the file give fp32's token, their difference, and how many rows' argmax agree;
	// and how many quiet rows the file answers like fp32.
	GatePassed                bool     `json:"gate_passed"`
	GateGraded                int      `json:"gate_graded"`
	GateAgreed                int      `json:"gate_agreed"`
	GateFP32Mean              float64  `json:"gate_fp32_mean"`
	GateExportMean            float64  `json:"gate_export_mean"`
	GateShortfall             float64  `json:"gate_shortfall"`
	QuietRows                 int      `json:"quiet_rows"`
	QuietRowsAnsweredLikeFP32 int      `json:"quiet_rows_answered_like_fp32"`
	Prompt                    PromptID `json:"prompt"`

	// Fidelity is next-token agreement and mean KL over the fidelity text; nil when the
	// reference had none, and FidelityMissing says why.
	Fidelity        *Fidelity `json:"fidelity"`
	FidelityMissing string    `json:"fidelity_missing,omitempty"`

	// Simulated is the fidelity measure taken without the hardware: for a file that is not
	// Measured, a stand-in program run on the CPU in its place (Qualcomm's QDQ program).
	// It sits beside NotMeasured, never in Fidelity's place, so nothing reads it as the
	// file's own figure; nil when nothing stood in.
	Simulated *SimulatedFidelity `json:"simulated,omitempty"`
	// SimulatedMissing says why a file that could have had a simulated figure has none.
	SimulatedMissing string `json:"simulated_missing,omitempty"`
}

// SimulatedFidelity is the fidelity figures of a program that stands in for the file, and
// what that program was.
type SimulatedFidelity struct {
	// By says what ran in the file's place, and that it is not the file (QDQOnCPU).
	By string `json:"by"`
	Fidelity
}

// QDQOnCPU is what a QNN file's simulated figure was measured on: the quantized program
// Qualcomm's script saves before lowering (quantize/dequantize ops around fp32 kernels),
// which is not the HTP's fixed-point kernels (docs/research/qnn-simulated-quality.md).
const QDQOnCPU = "QDQ program on the CPU (simulated quantization), not the HTP"

// Quality is the result's figures as the quality block records them.
func (r Result) Quality() Quality {
	return Quality{Measured: true, GatePassed: r.Passed, GateGraded: r.Graded, GateAgreed: r.Agreed,
		GateFP32Mean: r.FP32Mean, GateExportMean: r.ExportMean, GateShortfall: r.Shortfall,
		QuietRows: r.QuietRows, QuietRowsAnsweredLikeFP32: r.QuietRowsAnsweredLikeFP32, Prompt: r.Prompt,
		Fidelity: r.Fidelity, FidelityMissing: r.FidelityMissing}
}

// NotMeasuredHere is the quality block of a file whose backend (by its title, "Vulkan
// (GPU)") ExecuTorch's x86 runner cannot run.
func NotMeasuredHere(backendTitle string) Quality {
	return Quality{NotMeasured: fmt.Sprintf("not measured here: %s needs a phone", backendTitle)}
}

// SimulatedLine is the card's and config.json's words for a block without measured figures
// but with a simulated one: the simulated figures, labelled so, then why the file itself
// was not measured ("" when nothing was simulated).
func (q Quality) SimulatedLine() string {
	s := q.Simulated
	if s == nil {
		return ""
	}
	line := fmt.Sprintf("simulated on the CPU (QDQ program, not the HTP): next token %.1f%% of %s, mean KL %.3f",
		100*s.NextTokenAgreement, family.Commas(int64(s.Positions)), s.MeanKL)
	if q.NotMeasured != "" {
		line += "; " + q.NotMeasured
	}
	return line
}

// FidelityLine is the step summary's line for the fidelity figures.
func (r Result) FidelityLine() string {
	f := r.Fidelity
	if f == nil {
		if r.FidelityMissing == "" {
			return ""
		}
		return "fidelity: not measured: " + r.FidelityMissing
	}
	line := fmt.Sprintf("fidelity: next token like fp32 at %d of %d positions of %s (%.1f%%), mean KL(fp32 || export) %.4f nats over the top %d tokens and the rest (max %.4f)",
		f.Agreed, f.Positions, f.Text.File, 100*f.NextTokenAgreement, f.MeanKL, f.TopK, f.MaxKL)
	if d := f.Deep; d != nil {
		line += fmt.Sprintf("; deep in the window (positions %d to %d): next token at %d of %d (%.1f%%), mean KL %.4f (max %.4f)",
			d.From, d.From+d.Positions-1, d.Agreed, d.Positions, 100*d.NextTokenAgreement, d.MeanKL, d.MaxKL)
	}
	return line
}
