package speed

import "fmt"

// Prompt is one prompt the speed driver cuts from the fidelity text: its first Tokens
// tokens as the file's tokenizer counts them.
type Prompt struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// Prompts are the prompts a file of window tokens, prefilling at most chunk tokens a call
// (get_max_seq_len), can run with NewTokens to decode: ShortPrompt tokens, and one chunk and
// PastChunk tokens more. A prompt the window cannot hold is skipped, with why.
func Prompts(window, chunk int) (prompts []Prompt, skipped []string) {
	fits := func(n int) bool { return n+NewTokens < window }
	if fits(ShortPrompt) {
		prompts = append(prompts, Prompt{Name: fmt.Sprintf("%d-token", ShortPrompt), Tokens: ShortPrompt})
	} else {
		skipped = append(skipped, fmt.Sprintf("the %d-token window holds no %d-token prompt and %d new tokens", window, ShortPrompt, NewTokens))
	}
	switch long := chunk + PastChunk; {
	case chunk <= 0:
		skipped = append(skipped, "the file names no prefill chunk (get_max_seq_len), so no prompt runs past one")
	case !fits(long):
		skipped = append(skipped, fmt.Sprintf("the %d-token window holds no prompt past one %d-token prefill chunk and %d new tokens", window, chunk, NewTokens))
	case long != ShortPrompt:
		prompts = append(prompts, Prompt{Name: fmt.Sprintf("%d-token (one %d-token chunk and %d)", long, chunk, PastChunk), Tokens: long})
	}
	return prompts, skipped
}

// Output is the speed driver's JSON result.
type Output struct {
	LoadSeconds       float64     `json:"load_seconds"`
	RSSAfterLoadBytes int64       `json:"rss_after_load_bytes"`
	RunnerError       string      `json:"runner_error"`
	Runs              []RunOutput `json:"runs"`
}

// RunOutput is one prompt's run as the driver saw it: the runner's stats JSON
// (stats_to_json_string) or its exception.
type RunOutput struct {
	Name        string       `json:"name"`
	RunnerError string       `json:"runner_error"`
	Stats       *RunnerStats `json:"stats"`
}

// RunnerStats are the stats.h fields the figures come from: counts, and timestamps in
// units of 1/SCALING_FACTOR_UNITS_PER_SECOND seconds (milliseconds).
type RunnerStats struct {
	PromptTokens    int     `json:"prompt_tokens"`
	GeneratedTokens int     `json:"generated_tokens"`
	InferenceStart  float64 `json:"inference_start_ms"`
	PromptEvalEnd   float64 `json:"prompt_eval_end_ms"`
	FirstToken      float64 `json:"first_token_ms"`
	InferenceEnd    float64 `json:"inference_end_ms"`
	UnitsPerSecond  float64 `json:"SCALING_FACTOR_UNITS_PER_SECOND"`
}

// Figures turns one run's stats into its rates as ExecuTorch's own report (stats.h
// print_report) computes them: prefill is the prompt's tokens over the time from the start
// of inference to the end of the prompt's evaluation, decode the generated tokens over the
// time after it, the first token the time from the start to it. A rate whose interval
// the clock did not resolve is left 0, and Judge ignores it.
func Figures(name string, s RunnerStats) Run {
	unit := s.UnitsPerSecond
	if unit <= 0 {
		unit = 1000
	}
	rate := func(n int, from, to float64) float64 {
		if to <= from {
			return 0
		}
		return float64(n) / ((to - from) / unit)
	}
	run := Run{Name: name, PromptTokens: s.PromptTokens, GeneratedTokens: s.GeneratedTokens,
		PrefillTokPerSec: rate(s.PromptTokens, s.InferenceStart, s.PromptEvalEnd),
		DecodeTokPerSec:  rate(s.GeneratedTokens, s.PromptEvalEnd, s.InferenceEnd)}
	if s.FirstToken > s.InferenceStart {
		run.FirstTokenSeconds = (s.FirstToken - s.InferenceStart) / unit
	}
	return run
}

// FromOutput is the block the driver's output makes on host, with the file's structure and
// the prompts skipped, judged.
func FromOutput(out Output, host Host, st Structure, skipped []string) Result {
	r := Result{Host: host, LoadSeconds: out.LoadSeconds, RSSAfterLoadBytes: out.RSSAfterLoadBytes,
		RunnerError: out.RunnerError, Runs: []Run{}, Skipped: skipped, Structure: st}
	for _, o := range out.Runs {
		if o.RunnerError != "" || o.Stats == nil {
			why := o.RunnerError
			if why == "" {
				why = "the runner reported no stats"
			}
			r.Runs = append(r.Runs, Run{Name: o.Name, RunnerError: why})
			continue
		}
		r.Runs = append(r.Runs, Figures(o.Name, *o.Stats))
	}
	Judge(&r)
	return r
}
