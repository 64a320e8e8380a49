package publish

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// VariantQuality is a variant's distance from its fp32 source in config.json
// (docs/research/quality.md): the decision gate's mean probability of fp32's answer on its
// graded rows, the file's and fp32's, and over the fidelity text the share of positions
// whose next token is fp32's and the mean KL(fp32 || file) in nats, a lower bound of the
// full KL (null when the fp32 reference predates the text).
type VariantQuality struct {
	GatePassed         bool     `json:"gate_passed"`
	GateGraded         int      `json:"gate_graded"`
	GateExportMean     float64  `json:"gate_export_mean"`
	GateFP32Mean       float64  `json:"gate_fp32_mean"`
	NextTokenAgreement *float64 `json:"next_token_agreement"`
	MeanKL             *float64 `json:"mean_kl"`
	FidelityPositions  int      `json:"fidelity_positions,omitempty"`
	// The same figures over the fidelity text's deep positions, from DeepFrom on, where the
	// KV cache holds that many tokens (what an int8 cache is graded by).
	DeepFrom               int      `json:"deep_from,omitempty"`
	DeepNextTokenAgreement *float64 `json:"deep_next_token_agreement,omitempty"`
	DeepMeanKL             *float64 `json:"deep_mean_kl,omitempty"`
}

// SimulatedQuality is config.json's fidelity figures of a program that stood in for a
// variant on the CPU (a QNN file's QDQ program, gate.QDQOnCPU): the same measure as
// VariantQuality's, kept apart from it and labelled, since it is not the file's own.
type SimulatedQuality struct {
	Simulated          string  `json:"simulated"`
	NextTokenAgreement float64 `json:"next_token_agreement"`
	MeanKL             float64 `json:"mean_kl"`
	FidelityPositions  int     `json:"fidelity_positions"`
}

// simulatedQuality is config.json's simulated figures of a report's variants; nil when
// the file was measured itself or nothing stood in for it.
func simulatedQuality(r *report.Report) *SimulatedQuality {
	q := qualityOf(r)
	if q == nil || q.Measured || q.Simulated == nil {
		return nil
	}
	s := q.Simulated
	return &SimulatedQuality{Simulated: s.By, NextTokenAgreement: s.NextTokenAgreement, MeanKL: s.MeanKL, FidelityPositions: s.Positions}
}

// qualityOf is the report's quality block: the one the gate wrote; from its gate result
// for a report gated before the block existed; or, for a file whose backend the x86 runner
// cannot run, why it has none. Nil: a runnable file that was not gated.
func qualityOf(r *report.Report) *gate.Quality {
	switch {
	case r.Quality != nil:
		return r.Quality
	case r.Gate != nil:
		q := r.Gate.Quality()
		return &q
	}
	if b := backend.ByName(r.Backend); b != nil && !b.Smoke {
		q := gate.NotMeasuredHere(b.Title)
		return &q
	}
	return nil
}

// variantQuality is config.json's quality of a report's variants, and the note that
// stands in for a null one.
func variantQuality(r *report.Report) (*VariantQuality, string) {
	q := qualityOf(r)
	switch {
	case q == nil:
		return nil, "not measured: the file was not run on the decision gate"
	case !q.Measured && q.Simulated != nil:
		return nil, q.SimulatedLine()
	case !q.Measured:
		return nil, q.NotMeasured
	}
	v := &VariantQuality{GatePassed: q.GatePassed, GateGraded: q.GateGraded, GateExportMean: q.GateExportMean, GateFP32Mean: q.GateFP32Mean}
	if f := q.Fidelity; f != nil {
		agree, kl := f.NextTokenAgreement, f.MeanKL
		v.NextTokenAgreement, v.MeanKL, v.FidelityPositions = &agree, &kl, f.Positions
		if d := f.Deep; d != nil {
			dAgree, dKL := d.NextTokenAgreement, d.MeanKL
			v.DeepFrom, v.DeepNextTokenAgreement, v.DeepMeanKL = d.From, &dAgree, &dKL
		}
	}
	return v, ""
}

// qualityCell is the card's quality column for a report's files.
func qualityCell(r *report.Report) string {
	q := qualityOf(r)
	switch {
	case q == nil:
		return "not measured"
	case !q.Measured && q.Simulated != nil:
		return q.SimulatedLine()
	case !q.Measured:
		return q.NotMeasured
	}
	var parts []string
	if f := q.Fidelity; f != nil {
		parts = append(parts, fmt.Sprintf("next token %.1f%%, KL %.3f", 100*f.NextTokenAgreement, f.MeanKL))
		if d := f.Deep; d != nil {
			parts = append(parts, fmt.Sprintf("deep %.1f%%, KL %.3f", 100*d.NextTokenAgreement, d.MeanKL))
		}
	}
	parts = append(parts, fmt.Sprintf("gate %.2f (fp32 %.2f)", q.GateExportMean, q.GateFP32Mean))
	return strings.Join(parts, "; ")
}

// qualityNote explains the quality column under the files table when a file in it has
// figures, measured or simulated: what each means, over which text, and where the full
// numbers are.
func qualityNote(rs []placed) string {
	var f *gate.Fidelity
	measured, simulated := false, false
	for _, p := range rs {
		q := qualityOf(p.Report)
		switch {
		case q == nil:
			continue
		case q.Measured:
			measured = true
			if q.Fidelity != nil && f == nil {
				f = q.Fidelity
			}
		case q.Simulated != nil:
			simulated = true
			if f == nil {
				f = &q.Simulated.Fidelity
			}
		}
	}
	if !measured && !simulated {
		return ""
	}
	s := "Quality against the fp32 source: "
	if f != nil {
		s += fmt.Sprintf("*next token* is the share of the %d positions of a fixed English text (`%s`, sha256 `%s`) at which the file's most likely next token is fp32's, and *KL* the mean KL divergence from fp32's next-token distribution to the file's, in nats, over fp32's %d most likely tokens and the rest (a lower bound of the full KL); ",
			f.Positions, f.Text.File, short(f.Text.SHA256), f.TopK)
		if d := f.Deep; d != nil {
			s += fmt.Sprintf("*deep* gives both again over its positions from %s on, where the KV cache holds that many tokens (a file whose KV cache is int8 is graded there); ", thousands(int64(d.From)))
		}
	}
	if measured {
		s += "*gate* is the file's mean probability of fp32's answer on the decision gate's graded prompts, fp32's own in brackets. "
	}
	if simulated {
		s += "A *simulated* figure is the same measure taken on the quantized (QDQ) program the Qualcomm script saves before lowering, run on the CPU with quantize and dequantize steps around fp32 arithmetic: the file's quantization, but not the HTP's fixed-point kernels, so it is not the file's own figure, which needs a phone. "
	}
	fields := "`quality`"
	if simulated {
		fields = "`quality` (or `simulated_quality`)"
	}
	return s + "Each variant's " + fields + " in `config.json` and the `quality` block of its export report hold the figures."
}
