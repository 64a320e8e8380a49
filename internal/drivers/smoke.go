package drivers

import (
	"context"

	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// SmokeRunScript runs a .pte through ExecuTorch's TextLLMRunner and reports the reply.
const SmokeRunScript = "smoke_run.py"

// SmokeRun is the smoke driver's plan.
type SmokeRun struct {
	PTE       string `json:"pte"`
	Tokenizer string `json:"tokenizer"`
	// Source is the model folder whose chat template renders the question; empty uses the
	// completion prompt.
	Source   string `json:"source,omitempty"`
	Question string `json:"question"`
	// Completion is the fallback prompt, with {question} in it.
	Completion   string `json:"completion"`
	MaxNewTokens int    `json:"max_new_tokens"`
}

// NewSmokeRun is the reference's smoke run: the capital of France, greedy, 32 tokens.
func NewSmokeRun(pte, tokenizer, source string) SmokeRun {
	return SmokeRun{PTE: pte, Tokenizer: tokenizer, Source: source, Question: smoke.Question,
		Completion: "Question: {question}\nAnswer:", MaxNewTokens: smoke.MaxNewTokens}
}

// Smoke runs the driver; it needs a python with the ExecuTorch wheel (x86: the wheel's
// runner fails on aarch64).
func (r Runner) Smoke(ctx context.Context, plan SmokeRun) (smoke.Output, Process, error) {
	var out smoke.Output
	p, err := r.run(ctx, SmokeRunScript, plan, &out)
	return out, p, err
}
