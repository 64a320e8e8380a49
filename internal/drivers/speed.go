package drivers

import (
	"context"

	"github.com/experimentalmachines/exe-expo/internal/speed"
)

// SpeedRunScript runs a .pte through ExecuTorch's TextLLMRunner on fixed prompts and
// reports the runner's stats and the memory after load.
const SpeedRunScript = "speed_run.py"

// SpeedRun is the speed driver's plan.
type SpeedRun struct {
	PTE       string `json:"pte"`
	Tokenizer string `json:"tokenizer"`
	// Text is what the prompts are cut from: the fidelity text, so every file of every
	// model reads the same words.
	Text         string         `json:"text"`
	Prompts      []speed.Prompt `json:"prompts"`
	MaxNewTokens int            `json:"max_new_tokens"`
}

// NewSpeedRun is the speed run of a file: the prompts internal/speed gives its window and
// prefill chunk, each decoding speed.NewTokens tokens.
func NewSpeedRun(pte, tokenizer, text string, prompts []speed.Prompt) SpeedRun {
	return SpeedRun{PTE: pte, Tokenizer: tokenizer, Text: text, Prompts: prompts, MaxNewTokens: speed.NewTokens}
}

// Speed runs the driver; like Smoke it needs a python with the ExecuTorch wheel.
func (r Runner) Speed(ctx context.Context, plan SpeedRun) (speed.Output, Process, error) {
	var out speed.Output
	p, err := r.run(ctx, SpeedRunScript, plan, &out)
	return out, p, err
}
