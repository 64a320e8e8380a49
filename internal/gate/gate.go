// Package gate is the decision gate (docs/research/checks.md): a quantized file is
// published only if, on prompts where its fp32 source is confident, it still puts its
// probability on fp32's token. The drivers only measure (fp32's argmax and probability per
// prompt, the export's probability of that token and its own argmax); every verdict is
// here, in Go, so the thresholds are read and tested in one place.
package gate

import (
	"fmt"
	"sort"
	"strings"
)

// The thresholds of the reference's gate: calibrated so that round-to-nearest SmolLM2-135M
// (0.190 against fp32's 0.583) fails and every GPTQ export of its table passes.
const (
	// Confident is the fp32 probability above which a search row is graded.
	Confident = 0.5
	// MaxShortfall is how far the export's mean probability of fp32's token may fall
	// below fp32's own over the graded rows.
	MaxShortfall = 0.25
	// MinAgreement is the share of graded rows whose export argmax must be fp32's token.
	MinAgreement = 0.9
	// QuietMisses is how many quiet rows may be answered unlike fp32 (3 of 4 must agree).
	QuietMisses = 1
)

// Kinds of rows: a search row fp32 is confident on is graded, else undecided.
const (
	KindGraded    = "graded"
	KindUndecided = "undecided"
	KindQuiet     = "quiet"
)

// Reference is gate.json: fp32's next token on each prompt, keyed by question.
type Reference struct {
	Rows map[string]Token `json:"rows"`
	// Confident lists the questions fp32 gives p > Confident, sorted.
	Confident []string `json:"confident"`
	// Prompt is the prompt file the rows were rendered with.
	Prompt PromptID `json:"prompt"`
	// Fidelity is fp32's side of the fidelity text (fidelity.go); absent from a reference
	// made before gate.fidelity_text was configured.
	Fidelity *FidelityReference `json:"fidelity,omitempty"`
}

// Token is one prompt's next token as the fp32 model chose it.
type Token struct {
	Token int     `json:"token"`
	P     float64 `json:"p"`
	Text  string  `json:"text"`
}

// Measured is the export's answer on the same prompts.
type Measured struct {
	Rows   map[string]Answer `json:"rows"`
	Prompt PromptID          `json:"prompt"`
	// Fidelity is the export's side of the fidelity text, measured when the reference has one.
	Fidelity *FidelityMeasured `json:"fidelity,omitempty"`
	// KVCache is how the measured file keeps its KV cache ("int8" has its deep positions
	// graded); empty when unknown.
	KVCache string `json:"-"`
}

// Answer is the export's last-position distribution on one prompt, reduced to what the
// gate grades: the probability of fp32's token and the export's own argmax.
type Answer struct {
	// P is the export's probability of fp32's token.
	P float64 `json:"p"`
	// Token and Text are the export's argmax.
	Token int    `json:"token"`
	Text  string `json:"text"`
}

// Row is one row of the verdict.
type Row struct {
	FP32   Token  `json:"fp32"`
	Export Answer `json:"export"`
	Kind   string `json:"kind"`
}

// Result is the gate's verdict as the export report and audit record it.
type Result struct {
	Kind                      string         `json:"kind"`
	Passed                    bool           `json:"passed"`
	Problems                  []string       `json:"problems"`
	Graded                    int            `json:"graded"`
	FP32Mean                  float64        `json:"fp32_mean"`
	ExportMean                float64        `json:"export_mean"`
	Agreed                    int            `json:"agreed"`
	Shortfall                 float64        `json:"shortfall"`
	QuietRowsAnsweredLikeFP32 int            `json:"quiet_rows_answered_like_fp32"`
	QuietRows                 int            `json:"quiet_rows"`
	MeasuresToolCalling       bool           `json:"measures_tool_calling"`
	FP32UndecidedRows         []string       `json:"fp32_undecided_rows"`
	Rows                      map[string]Row `json:"rows"`
	// Prompt is the prompt file both sides were made with: scores compare only across it.
	Prompt PromptID `json:"prompt"`
	// Fidelity is next-token agreement and mean KL against fp32 over the fidelity text. It
	// is recorded, not graded: it does not decide Passed. Nil when the reference has no
	// fidelity part, and FidelityMissing says so.
	Fidelity        *Fidelity `json:"fidelity,omitempty"`
	FidelityMissing string    `json:"fidelity_missing,omitempty"`
}

// NoFidelityReference is why a gate result has no fidelity figures: its gate.json predates
// the fidelity text.
const NoFidelityReference = "the fp32 reference (gate.json) has no fidelity text: it was made before gate.fidelity_text was configured; remove it and make it again with the fp32 weights to measure it"

// Verdict is the one-line summary a step summary prints.
func (r Result) Verdict() string {
	if r.Passed {
		return fmt.Sprintf("decision gate: passed, export %.3f against fp32 %.3f on %d graded rows, %d agreed, %d of %d quiet rows",
			r.ExportMean, r.FP32Mean, r.Graded, r.Agreed, r.QuietRowsAnsweredLikeFP32, r.QuietRows)
	}
	return "decision gate: failed: " + strings.Join(r.Problems, "; ")
}

// Score grades the export against fp32 on the configured rows. A row missing on either side
// or prompts that differ are errors, not verdicts: nothing comparable was measured.
func Score(rows Rows, ref Reference, got Measured) (Result, error) {
	if ref.Prompt.SHA256 != got.Prompt.SHA256 {
		return Result{}, fmt.Errorf("the reference was made with prompt file %s and the export measured with %s: scores compare only across the same prompts",
			ref.Prompt, got.Prompt)
	}
	r := Result{Kind: "gate", Problems: []string{}, FP32UndecidedRows: []string{}, Rows: map[string]Row{},
		Prompt: ref.Prompt, QuietRows: len(rows.Quiet)}
	if err := r.collect(rows, ref, got); err != nil {
		return Result{}, err
	}
	r.grade(rows)
	switch {
	case ref.Fidelity == nil:
		r.FidelityMissing = NoFidelityReference
	case got.Fidelity == nil:
		return Result{}, fmt.Errorf("the fp32 reference has the fidelity text %s and the export's measurement has none", ref.Fidelity.Text)
	default:
		deepFrom := rows.DeepFrom
		if deepFrom >= len(ref.Fidelity.Positions) {
			deepFrom = 0 // a reference shorter than the deep start has no deep positions
		}
		f, err := CompareFidelity(*ref.Fidelity, *got.Fidelity, deepFrom)
		if err != nil {
			return Result{}, err
		}
		r.Fidelity = &f
	}
	r.gradeFidelity(rows.MaxMeanKL)
	if got.KVCache == "int8" {
		r.gradeDeep(rows.MaxDeepMeanKL)
	}
	r.Passed = len(r.Problems) == 0
	return r, nil
}

// gradeFidelity fails a file whose mean KL on the fidelity text is above limit (a
// pipeline's gate.max_mean_kl); a limit of 0 records the figure without grading it.
func (r *Result) gradeFidelity(limit float64) {
	switch {
	case limit <= 0:
	case r.Fidelity == nil:
		r.Problems = append(r.Problems, fmt.Sprintf("gate.max_mean_kl is %g but the fp32 reference has no fidelity text to grade: make gate.json again", limit))
	case r.Fidelity.MeanKL > limit:
		r.Problems = append(r.Problems, fmt.Sprintf("mean KL against fp32 on the fidelity text is %.5f, above gate.max_mean_kl %g (next token agrees at %d of %d positions)",
			r.Fidelity.MeanKL, limit, r.Fidelity.Agreed, r.Fidelity.Positions))
	}
}

// gradeDeep fails an int8-cache file whose mean KL over the fidelity text's deep positions
// is above limit (gate.max_deep_mean_kl): its cache's error has grown past what the
// pipeline accepts; a limit of 0 records the figure without grading it.
func (r *Result) gradeDeep(limit float64) {
	switch {
	case limit <= 0:
	case r.Fidelity == nil || r.Fidelity.Deep == nil:
		r.Problems = append(r.Problems, fmt.Sprintf("gate.max_deep_mean_kl is %g but the fp32 reference has no deep positions to grade the int8 KV cache by: make gate.json again", limit))
	case r.Fidelity.Deep.MeanKL > limit:
		d := r.Fidelity.Deep
		r.Problems = append(r.Problems, fmt.Sprintf("the int8 KV cache drifts: mean KL against fp32 at the fidelity text's positions %d to %d is %.5f, above gate.max_deep_mean_kl %g (next token agrees at %d of %d)",
			d.From, d.From+d.Positions-1, d.MeanKL, limit, d.Agreed, d.Positions))
	}
}

// collect pairs fp32's and the export's answer on each row and classifies it.
func (r *Result) collect(rows Rows, ref Reference, got Measured) error {
	add := func(q, kind string) error {
		f, ok := ref.Rows[q]
		if !ok {
			return fmt.Errorf("the fp32 reference has no row %q", q)
		}
		e, ok := got.Rows[q]
		if !ok {
			return fmt.Errorf("the export's measurement has no row %q", q)
		}
		if kind == KindGraded && f.P <= Confident {
			kind = KindUndecided
		}
		r.Rows[q] = Row{FP32: f, Export: e, Kind: kind}
		return nil
	}
	for _, s := range rows.Search {
		if err := add(s.Question, KindGraded); err != nil {
			return err
		}
	}
	for _, q := range rows.Quiet {
		if err := add(q, KindQuiet); err != nil {
			return err
		}
	}
	return nil
}

// grade applies the rules of the reference's gate to the collected rows.
func (r *Result) grade(rows Rows) {
	quietTokens := map[int]bool{}
	for _, q := range rows.Quiet {
		row := r.Rows[q]
		quietTokens[row.FP32.Token] = true
		if row.Export.Token == row.FP32.Token {
			r.QuietRowsAnsweredLikeFP32++
		}
	}
	var fp32Sum, exportSum float64
	distinct := 0
	for _, s := range rows.Search {
		row := r.Rows[s.Question]
		if row.Kind == KindUndecided {
			r.FP32UndecidedRows = append(r.FP32UndecidedRows, s.Question)
			continue
		}
		r.Graded++
		fp32Sum += row.FP32.P
		exportSum += row.Export.P
		if row.Export.Token == row.FP32.Token {
			r.Agreed++
		}
		if !quietTokens[row.FP32.Token] {
			distinct++
		}
	}
	sort.Strings(r.FP32UndecidedRows)
	if r.Graded == 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("fp32 is confident (p > %.1f) on no search row, so the gate has nothing to grade", Confident))
	} else {
		r.FP32Mean, r.ExportMean = fp32Sum/float64(r.Graded), exportSum/float64(r.Graded)
		r.Shortfall = r.FP32Mean - r.ExportMean
		r.MeasuresToolCalling = distinct >= r.Graded/2
		if r.Shortfall > MaxShortfall {
			r.Problems = append(r.Problems, fmt.Sprintf(
				"the export gives fp32's token a mean probability of %.3f against fp32's %.3f over %d graded rows, %.3f short; at most %.2f is allowed",
				r.ExportMean, r.FP32Mean, r.Graded, r.Shortfall, MaxShortfall))
		}
		if float64(r.Agreed) < MinAgreement*float64(r.Graded) {
			r.Problems = append(r.Problems, fmt.Sprintf(
				"the export's top token is fp32's on %d of %d graded rows; at least %.0f%% must agree",
				r.Agreed, r.Graded, 100*MinAgreement))
		}
	}
	if need := len(rows.Quiet) - QuietMisses; r.QuietRowsAnsweredLikeFP32 < need {
		r.Problems = append(r.Problems, fmt.Sprintf(
			"the export answers %d of %d quiet rows like fp32; at least %d must", r.QuietRowsAnsweredLikeFP32, len(rows.Quiet), need))
	}
}
