// Package speed is how fast an exported file runs where it was measured: prefill and decode
// tokens per second, time to first token and resident memory after load, from ExecuTorch's
// text LLM runner (the app's runner) over fixed prompts cut from the fidelity text. The
// figures are the host's, never a phone's, and the block says which host; the rule that
// turns them into a finding (a file that prefills one token a call) is here, so the speed
// driver measures and decides nothing (docs/research/speed.md).
package speed

import (
	"fmt"
	"strings"
)

const (
	// ShortPrompt is the first prompt's length in tokens: a chat turn with some history,
	// inside one prefill chunk of every window exe-expo builds.
	ShortPrompt = 512
	// PastChunk is how far the long prompt runs past one prefill chunk (get_max_seq_len):
	// far enough that the runner must call forward twice to prefill it, so a file whose
	// second chunk is slow shows it.
	PastChunk = 256
	// NewTokens is how many tokens each run decodes: enough calls that the decode rate is
	// not one call's jitter.
	NewTokens = 64
	// OneTokenMargin is how much faster than decode prefill must be. A file that takes one
	// token a call prefills each prompt token with one forward call, the work of one decode
	// step less the sampling, so its prefill rate is its decode rate within some tens of
	// percent; a file that prefills a chunk a call runs the prompt as matrix products, which
	// XNNPACK runs several times faster than the same tokens one matrix-vector product at a
	// time on every CPU it targets. Twice decode sits between the two with room on both
	// sides: noise does not lift a one-token file over it, and a batched prefill that falls
	// under it has lost its batching, which is the finding.
	OneTokenMargin = 2.0
	// HostNote is what the block says of its figures wherever it is shown.
	HostNote = "measured on the export host, not a phone"
)

// Host is the machine the figures come from.
type Host struct {
	// Arch is GOARCH ("arm64", "amd64"); ARM is where the phone's kernels run (the int8 KV
	// cache's dequantization is NEON code there and a scalar loop on x86).
	Arch     string `json:"arch"`
	CPUModel string `json:"cpu_model"`
	NProc    int    `json:"nproc"`
	// Runner is the workflow's runner label ($EXE_EXPO_RUNNER), empty on a local run.
	Runner string `json:"runner,omitempty"`
	Note   string `json:"note"`
}

// Describe is the host in a few words: "arm64, 8 CPUs (Neoverse-N2), runner blacksmith-8vcpu-ubuntu-2404-arm".
func (h Host) Describe() string {
	s := fmt.Sprintf("%s, %d CPUs", h.Arch, h.NProc)
	if h.CPUModel != "" {
		s += " (" + h.CPUModel + ")"
	}
	if h.Runner != "" {
		s += ", runner " + h.Runner
	}
	return s
}

// Run is one prompt's figures.
type Run struct {
	// Name says which prompt: "512 tokens", "one chunk + 256 tokens".
	Name              string  `json:"name"`
	PromptTokens      int     `json:"prompt_tokens"`
	GeneratedTokens   int     `json:"generated_tokens"`
	PrefillTokPerSec  float64 `json:"prefill_tokens_per_second"`
	DecodeTokPerSec   float64 `json:"decode_tokens_per_second"`
	FirstTokenSeconds float64 `json:"first_token_seconds"`
	// RunnerError is the runner's exception on this prompt ("<Type>: <message>").
	RunnerError string `json:"runner_error,omitempty"`
}

// Result is the report's speed block.
type Result struct {
	Host Host `json:"host"`
	// LoadSeconds is how long the runner took to load the file; RSSAfterLoadBytes the
	// process's resident memory then (the weights and the whole KV cache, allocated at load).
	LoadSeconds       float64 `json:"load_seconds"`
	RSSAfterLoadBytes int64   `json:"rss_after_load_bytes"`
	Runs              []Run   `json:"runs"`
	// Skipped are the prompts the window cannot hold, with why.
	Skipped []string `json:"skipped,omitempty"`
	// BlocksPublish says the slow path refuses the file (speed.refuse_slow_path in
	// pipeline.yaml, as verify read it): the report's blockers then name it.
	BlocksPublish bool `json:"blocks_publish,omitempty"`
	// Structure is what the file says of its prefill (Structure).
	Structure Structure `json:"structure"`
	// SlowPath are the findings that the file prefills one token a call: the structural
	// signal, the measured one, or both; empty when neither. MeasuredSlow says the measured
	// rule is among them.
	SlowPath     []string `json:"slow_path"`
	MeasuredSlow bool     `json:"measured_slow,omitempty"`
	// RunnerError is why nothing was measured: the runner's failure to load the file.
	RunnerError string `json:"runner_error,omitempty"`
}

// Slow says whether the file takes the slow path.
func (r *Result) Slow() bool { return r != nil && len(r.SlowPath) > 0 }

// PhoneArch is the architecture whose measure speaks for a phone.
const PhoneArch = "arm64"

// Refusable says whether the findings may refuse the file (speed.refuse_slow_path): the
// structure anywhere, the measure only where it was taken on ARM. x86's kernels are not the
// phone's: the int8 KV cache's dequantization is a scalar loop there and NEON code on ARM,
// so an int8-cache file can prefill at its decode rate on x86 and not on a phone (the
// 0.6B 8k file: 20 tokens/s over 1,873 tokens on x86, docs/research/speed.md). An x86
// finding is recorded and shown, and refuses nothing.
func (r *Result) Refusable() bool {
	return r != nil && (r.Structure.OneTokenPerCall || r.MeasuredSlow && r.Host.Arch == PhoneArch)
}

// Judge fills the block's findings from its runs and the file's structure: the structure
// when it says one token a call, and every run whose prefill is not OneTokenMargin times
// its decode.
func Judge(r *Result) {
	r.SlowPath, r.MeasuredSlow = []string{}, false
	if r.Structure.OneTokenPerCall {
		r.SlowPath = append(r.SlowPath, "the file prefills one token a call: "+r.Structure.Why)
	}
	for _, run := range r.Runs {
		if run.RunnerError != "" || run.DecodeTokPerSec <= 0 || run.PrefillTokPerSec <= 0 {
			continue
		}
		if run.PrefillTokPerSec < OneTokenMargin*run.DecodeTokPerSec {
			r.MeasuredSlow = true
			r.SlowPath = append(r.SlowPath, fmt.Sprintf("on the %s prompt it prefilled %.1f tokens/s against %.1f decoding: no faster than %g times decode, as a file that takes one token a call",
				run.Name, run.PrefillTokPerSec, run.DecodeTokPerSec, OneTokenMargin))
		}
	}
}

// Line is the block in one sentence, for the step summary.
func (r *Result) Line() string {
	if r.RunnerError != "" {
		return "speed: not measured: " + r.RunnerError
	}
	var parts []string
	for _, run := range r.Runs {
		parts = append(parts, run.Describe())
	}
	s := fmt.Sprintf("speed on %s (%s): %s; %.0f MB resident after load", r.Host.Describe(), HostNote,
		strings.Join(parts, "; "), float64(r.RSSAfterLoadBytes)/1e6)
	if r.Slow() {
		s += "; slow path: " + strings.Join(r.SlowPath, "; ")
	}
	return s
}

// Describe is one run in words.
func (run Run) Describe() string {
	if run.RunnerError != "" {
		return fmt.Sprintf("%s prompt: runner error: %s", run.Name, run.RunnerError)
	}
	return fmt.Sprintf("%s prompt (%d tokens): prefill %.1f tokens/s, decode %s, first token in %.2f s",
		run.Name, run.PromptTokens, run.PrefillTokPerSec, run.Decode(), run.FirstTokenSeconds)
}

// Decode is the decode rate in words: the runner stops at the model's end token, so a reply
// that ended at once leaves no interval to time, and says so.
func (run Run) Decode() string {
	if run.DecodeTokPerSec <= 0 {
		return fmt.Sprintf("not timed (the reply ended after %d tokens)", run.GeneratedTokens)
	}
	return fmt.Sprintf("%.1f tokens/s", run.DecodeTokPerSec)
}
