package drivers

import (
	"context"
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// GateProbeScript measures next-token distributions for the decision gate: fp32's argmax
// and its probability (reference), or the export's probability of that token and its own
// argmax (measure); and over the fidelity text, fp32's top-k tokens per position
// (reference) or the export's distribution on them (measure). internal/gate grades the numbers.
const GateProbeScript = "gate_probe.py"

// GateModel is the model a probe runs: "hf" (the fp32 source folder, with transformers),
// "pte" (an exported program, with ExecuTorch's pybindings) or "torchscript" (a traced
// module returning logits, which the driver's tests use).
type GateModel struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	// Tokenizer is the folder or tokenizer file the rows are rendered with.
	Tokenizer string `json:"tokenizer,omitempty"`
}

// GateProbe is one probe run over every gate row.
type GateProbe struct {
	Mode   string      `json:"mode"`
	Model  GateModel   `json:"model"`
	Prompt gate.Prompt `json:"prompt"`
	Rows   []GateRow   `json:"rows"`
	// FP32 is fp32's token per question, which measure reports the probability of.
	FP32 map[string]int `json:"fp32,omitempty"`
	// Fidelity, when set, adds the fidelity text's positions to the run.
	Fidelity *GateFidelity `json:"fidelity,omitempty"`
}

// GateFidelity is the fidelity text's part of a probe. Reference: Text is tokenized
// (or TokenIDs taken as they are) and its first Tokens tokens fed; TopK of fp32's tokens are
// kept per position. Measure: TokenIDs are fed and Buckets (fp32's kept tokens per
// position) measured.
type GateFidelity struct {
	Text     string  `json:"text,omitempty"`
	Tokens   int     `json:"tokens,omitempty"`
	TopK     int     `json:"top_k,omitempty"`
	TokenIDs []int   `json:"token_ids,omitempty"`
	Buckets  [][]int `json:"buckets,omitempty"`
}

// FidelityPlan is the reference's fidelity part for a text.
func FidelityPlan(t gate.FidelityText) *GateFidelity {
	return &GateFidelity{Text: t.Text, Tokens: t.Tokens, TopK: t.TopK}
}

// GateReferenceResult is what the fp32 run gives: the rows' tokens, and fp32's side of the
// fidelity text when the plan asked for it (Text is the caller's to fill).
type GateReferenceResult struct {
	Rows     map[string]gate.Token   `json:"rows"`
	Fidelity *gate.FidelityReference `json:"fidelity"`
}

// GateMeasureResult is what the export's run gives.
type GateMeasureResult struct {
	Rows     map[string]gate.Answer `json:"rows"`
	Fidelity *gate.FidelityMeasured `json:"fidelity"`
}

// GateRow is one prompt: the user message, or token ids already rendered.
type GateRow struct {
	Question string `json:"question"`
	User     string `json:"user"`
	TokenIDs []int  `json:"token_ids,omitempty"`
}

// GateRowsFrom lists the search rows (with their trailer) and then the quiet rows.
func GateRowsFrom(r gate.Rows) []GateRow {
	out := make([]GateRow, 0, len(r.Search)+len(r.Quiet))
	for _, s := range r.Search {
		out = append(out, GateRow{Question: s.Question, User: s.User})
	}
	for _, q := range r.Quiet {
		out = append(out, GateRow{Question: q, User: q})
	}
	return out
}

// GateReference runs the fp32 model over the rows (gate.json's rows), and over the fidelity
// text when the plan has one.
func (r Runner) GateReference(ctx context.Context, plan GateProbe) (GateReferenceResult, Process, error) {
	plan.Mode, plan.FP32 = "reference", nil
	var res GateReferenceResult
	p, err := r.run(ctx, GateProbeScript, plan, &res)
	if err != nil {
		return res, p, err
	}
	if err := complete(plan.Rows, res.Rows); err != nil {
		return res, p, err
	}
	if f := plan.Fidelity; f != nil {
		if res.Fidelity == nil {
			return res, p, fmt.Errorf("%s returned no fidelity positions", GateProbeScript)
		}
		if res.Fidelity.TopK != f.TopK {
			return res, p, fmt.Errorf("%s kept %d tokens per fidelity position, not the %d asked", GateProbeScript, res.Fidelity.TopK, f.TopK)
		}
		if f.Tokens > 0 && len(res.Fidelity.Tokens) != f.Tokens {
			return res, p, fmt.Errorf("%s fed %d tokens of the fidelity text, not the %d asked", GateProbeScript, len(res.Fidelity.Tokens), f.Tokens)
		}
		if err := res.Fidelity.CheckReference(); err != nil {
			return res, p, fmt.Errorf("%s: %w", GateProbeScript, err)
		}
	}
	return res, p, nil
}

// GateMeasure runs the export over the rows with fp32's tokens, and over the fidelity
// text's tokens with fp32's buckets when ref has them.
func (r Runner) GateMeasure(ctx context.Context, plan GateProbe, ref map[string]gate.Token, fid *gate.FidelityReference) (GateMeasureResult, Process, error) {
	plan.Mode, plan.FP32, plan.Fidelity = "measure", map[string]int{}, nil
	for q, t := range ref {
		plan.FP32[q] = t.Token
	}
	if fid != nil {
		plan.Fidelity = &GateFidelity{TokenIDs: fid.Tokens, Buckets: make([][]int, len(fid.Positions))}
		for i, pos := range fid.Positions {
			plan.Fidelity.Buckets[i] = pos.IDs
		}
	}
	var res GateMeasureResult
	p, err := r.run(ctx, GateProbeScript, plan, &res)
	if err != nil {
		return res, p, err
	}
	if err := complete(plan.Rows, res.Rows); err != nil {
		return res, p, err
	}
	if fid != nil && (res.Fidelity == nil || len(res.Fidelity.Positions) != len(fid.Positions)) {
		n := 0
		if res.Fidelity != nil {
			n = len(res.Fidelity.Positions)
		}
		return res, p, fmt.Errorf("%s returned %d fidelity positions for the %d it was given", GateProbeScript, n, len(fid.Positions))
	}
	return res, p, nil
}

// complete checks the driver answered every row it was given.
func complete[V any](rows []GateRow, got map[string]V) error {
	for _, row := range rows {
		if _, ok := got[row.Question]; !ok {
			return fmt.Errorf("%s returned no result for row %q", GateProbeScript, row.Question)
		}
	}
	if len(got) != len(rows) {
		return fmt.Errorf("%s returned %d rows for the %d it was given", GateProbeScript, len(got), len(rows))
	}
	return nil
}
