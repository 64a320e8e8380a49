package drivers

import (
	"context"
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// CalibRowsScript renders the GPTQ solve's calibration rows and continues each with the
// fp32 model's greedy reply; internal/calib plans the rows and checks what comes back.
const CalibRowsScript = "calib_rows.py"

// CalibRows is calib_rows.py's input: the fp32 source folder (weights, tokenizer, chat
// template), the prompt the app rows are rendered under, and the rows.
type CalibRows struct {
	Model  string      `json:"model"`
	Prompt gate.Prompt `json:"prompt"`
	Rows   []CalibRow  `json:"rows"`
}

// CalibRow is one row: its user message, whether it is rendered as the app renders a
// conversation (system prompt, primer, tools) or alone in the plain chat template, and the
// longest reply the fp32 model may continue it with.
type CalibRow struct {
	Name         string `json:"name"`
	User         string `json:"user"`
	App          bool   `json:"app"`
	MaxNewTokens int    `json:"max_new_tokens"`
}

// CalibReply is one rendered row: its prompt's token ids, the fp32 model's greedy reply
// and the reply's text without special tokens (empty when the model said nothing).
type CalibReply struct {
	Name   string `json:"name"`
	Prompt []int  `json:"prompt"`
	Reply  []int  `json:"reply"`
	Text   string `json:"text"`
}

// CalibRows runs calib_rows.py; the replies come back in the plan's order, one per row.
func (r Runner) CalibRows(ctx context.Context, plan CalibRows) ([]CalibReply, Process, error) {
	if plan.Model == "" || len(plan.Rows) == 0 {
		return nil, Process{}, fmt.Errorf("calibration plan: the model folder and at least one row are required")
	}
	var res struct {
		Rows []CalibReply `json:"rows"`
	}
	p, err := r.run(ctx, CalibRowsScript, plan, &res)
	if err != nil {
		return nil, p, err
	}
	if len(res.Rows) != len(plan.Rows) {
		return nil, p, fmt.Errorf("%s returned %d rows for the %d it was given", CalibRowsScript, len(res.Rows), len(plan.Rows))
	}
	for i, row := range plan.Rows {
		if res.Rows[i].Name != row.Name {
			return nil, p, fmt.Errorf("%s returned row %q where row %q was due", CalibRowsScript, res.Rows[i].Name, row.Name)
		}
	}
	return res.Rows, p, nil
}
