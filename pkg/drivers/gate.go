package drivers

import (
	"context"
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/gate"
)

// GateProbeScript measures next-token distributions for the decision gate: fp32's argmax
// and its probability (reference), or the export's probability of that token and its own
// argmax (measure). pkg/gate grades the numbers.
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

// GateReference runs the fp32 model over the rows: gate.json's rows.
func (r Runner) GateReference(ctx context.Context, plan GateProbe) (map[string]gate.Token, Process, error) {
	plan.Mode, plan.FP32 = "reference", nil
	var res struct {
		Rows map[string]gate.Token `json:"rows"`
	}
	p, err := r.run(ctx, GateProbeScript, plan, &res)
	if err != nil {
		return nil, p, err
	}
	return res.Rows, p, complete(plan.Rows, res.Rows)
}

// GateMeasure runs the export over the rows with fp32's tokens.
func (r Runner) GateMeasure(ctx context.Context, plan GateProbe, ref map[string]gate.Token) (map[string]gate.Answer, Process, error) {
	plan.Mode, plan.FP32 = "measure", map[string]int{}
	for q, t := range ref {
		plan.FP32[q] = t.Token
	}
	var res struct {
		Rows map[string]gate.Answer `json:"rows"`
	}
	p, err := r.run(ctx, GateProbeScript, plan, &res)
	if err != nil {
		return nil, p, err
	}
	return res.Rows, p, complete(plan.Rows, res.Rows)
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
