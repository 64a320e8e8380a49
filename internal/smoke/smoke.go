// Package smoke decides whether an exported file answers: the smoke driver runs it through
// ExecuTorch's text LLM runner (the runner the app uses) and reports tokens, text and the
// runner's stats; the verdict is here (docs/research/checks.md), so the driver decides
// nothing.
package smoke

import (
	"fmt"
	"strings"
	"unicode"
)

const (
	// MaxNewTokens is the reply length: greedy, 32 tokens.
	MaxNewTokens = 32
	// DegenerateRun is how many pieces a reply needs before the share of its commonest
	// piece can make it degenerate: a short answer ("Paris", ".") is rightly one piece.
	DegenerateRun = 8
	// DegenerateShare is the share of a reply's pieces, in percent, that one piece may not
	// reach once the reply has DegenerateRun pieces: a file whose weights lost their meaning
	// repeats one piece from the start, or nearly (27 "\x18" and 5 "\r" of 32), while a
	// sound reply of 8 or more pieces is words, no one piece at 80% of them.
	DegenerateShare = 80
	// AnswerRequiredFromParams is the size from which the reply must name the answer:
	// smaller models may ramble and still be exported right.
	AnswerRequiredFromParams = 500_000_000
	// Answer is what a model of that size must say to "What is the capital of France?".
	Answer = "paris"
	// Question is the smoke prompt's user message.
	Question = "What is the capital of France?"
)

// Output is the smoke driver's JSON result.
type Output struct {
	// Prompt is the text given to the runner; TemplateError is why the chat template could
	// not render it, when the driver fell back to a completion prompt.
	Prompt        string `json:"prompt"`
	TemplateError string `json:"template_error"`
	// Tokens are the generated pieces in order; Reply their concatenation.
	Tokens []string `json:"tokens"`
	Reply  string   `json:"reply"`
	// ReplyFrom is "runner", or "program" when the Python binding could not hand a piece
	// over as text (part of a UTF-8 character, which the app's JNI layer buffers) and the
	// driver decoded the same greedy generation's token ids itself.
	ReplyFrom string `json:"reply_from"`
	// RunnerError is "<Type>: <message>" of an exception the runner raised.
	RunnerError string `json:"runner_error"`
	// Stats is the runner's stats JSON (ExecuTorch's stats_to_json_string).
	Stats *Stats `json:"stats"`
}

// Stats are the runner's figures the report keeps.
type Stats struct {
	PrefillTokPerSec *float64 `json:"prefill_token_per_sec"`
	DecodeTokPerSec  *float64 `json:"decode_token_per_sec"`
	PromptTokens     int      `json:"prompt_tokens"`
	GeneratedTokens  int      `json:"generated_tokens"`
}

// Result is the smoke verdict as the export report records it.
type Result struct {
	Kind           string   `json:"kind"`
	Passed         bool     `json:"passed"`
	Problems       []string `json:"problems"`
	Prompt         string   `json:"prompt"`
	TemplateError  string   `json:"template_error"`
	Reply          string   `json:"reply"`
	ReplyFrom      string   `json:"reply_from,omitempty"`
	Tokens         int      `json:"tokens"`
	Answered       bool     `json:"answered"`
	AnswerRequired bool     `json:"answer_required"`
	Stats          *Stats   `json:"stats"`
}

// Judge applies the smoke rules to the driver's output for a model of totalParams.
func Judge(out Output, totalParams int64) Result {
	r := Result{Kind: "smoke", Problems: []string{}, Prompt: out.Prompt, TemplateError: out.TemplateError,
		Reply: out.Reply, ReplyFrom: out.ReplyFrom, Tokens: len(out.Tokens), Stats: out.Stats,
		Answered:       strings.Contains(strings.ToLower(out.Reply), Answer),
		AnswerRequired: totalParams >= AnswerRequiredFromParams}
	if out.RunnerError != "" {
		r.Problems = append(r.Problems, "runner error: "+out.RunnerError)
	}
	switch {
	case len(out.Tokens) == 0:
		r.Problems = append(r.Problems, "the file generated no token")
	default:
		if why := degenerate(out.Tokens); why != "" {
			r.Problems = append(r.Problems, "the reply is degenerate: "+why)
		}
	}
	if r.AnswerRequired && !r.Answered && len(out.Tokens) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("a model of %d parameters must answer %q with %q; it replied %q",
			totalParams, Question, Answer, out.Reply))
	}
	r.Passed = len(r.Problems) == 0
	return r
}

// degenerate says why a reply is degenerate, "" when it is not. The reference's rule (8
// or more pieces, all the same one) missed replies of control bytes and of one piece but
// for a few, so three rules hold: a control character other than tab, newline and carriage
// return (no chat reply holds one: they are bytes of a broken vocabulary); nothing but
// whitespace; and, from DegenerateRun pieces on, one piece at DegenerateShare% or more.
func degenerate(tokens []string) string {
	reply := strings.Join(tokens, "")
	for _, r := range reply {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return fmt.Sprintf("it holds the control character %U", r)
		}
	}
	if strings.TrimSpace(reply) == "" {
		return fmt.Sprintf("it is whitespace only (%q)", reply)
	}
	if len(tokens) < DegenerateRun {
		return ""
	}
	counts := map[string]int{}
	top := ""
	for _, t := range tokens {
		counts[t]++
		if counts[t] > counts[top] || counts[t] == counts[top] && t < top {
			top = t
		}
	}
	switch n := counts[top]; {
	case n == len(tokens):
		return fmt.Sprintf("all %d pieces are %q", n, top)
	case 100*n >= DegenerateShare*len(tokens):
		return fmt.Sprintf("%d of its %d pieces are %q (%d%% or more of one piece is degenerate)", n, len(tokens), top, DegenerateShare)
	}
	return ""
}

// Verdict is the one-line summary a step summary prints.
func (r Result) Verdict() string {
	if r.Passed {
		return fmt.Sprintf("smoke run: passed, %d tokens: %q", r.Tokens, r.Reply)
	}
	return "smoke run: failed: " + strings.Join(r.Problems, "; ")
}
