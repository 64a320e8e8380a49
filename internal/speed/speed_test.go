package speed_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/speed"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

// TestPrompts: the 512-token prompt and one a chunk and 256 tokens long, each only where the
// window holds it with the tokens decoded after it.
func TestPrompts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		window, chunk int
		want          []int
		skipped       int
	}{
		{"8k window, 2k chunks", 8192, 2048, []int{512, 2304}, 0},
		{"2k window cut at 2048 holds no prompt past a chunk", 2048, 2048, []int{512}, 1},
		{"2k window of 128-token chunks", 2048, 128, []int{512, 384}, 0},
		{"the long prompt just fits", 2048 + speed.PastChunk + speed.NewTokens + 1, 2048, []int{512, 2304}, 0},
		{"the long prompt one token over", 2048 + speed.PastChunk + speed.NewTokens, 2048, []int{512}, 1},
		{"a 256-token chunk makes the long prompt the short one", 4096, 256, []int{512}, 0},
		{"no chunk named", 4096, 0, []int{512}, 1},
		{"a window too small for either", 512, 512, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, skipped := speed.Prompts(tc.window, tc.chunk)
			var got []int
			for _, p := range ps {
				got = append(got, p.Tokens)
				assert.NotEmpty(t, p.Name)
			}
			assert.Equal(t, tc.want, got)
			assert.Len(t, skipped, tc.skipped, skipped)
		})
	}
}

// TestFigures: stats.h's timestamps turned into ExecuTorch's own rates.
func TestFigures(t *testing.T) {
	s := speed.RunnerStats{PromptTokens: 512, GeneratedTokens: 64, InferenceStart: 1000, PromptEvalEnd: 3000,
		FirstToken: 3010, InferenceEnd: 7000, UnitsPerSecond: 1000}
	got := speed.Figures("512-token", s)
	want := speed.Run{Name: "512-token", PromptTokens: 512, GeneratedTokens: 64, PrefillTokPerSec: 256,
		DecodeTokPerSec: 16, FirstTokenSeconds: 2.01}
	assert.Empty(t, cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })))

	s.PromptEvalEnd = s.InferenceStart // an interval the clock did not resolve
	s.UnitsPerSecond = 0               // and no scale: milliseconds
	got = speed.Figures("x", s)
	assert.Zero(t, got.PrefillTokPerSec)
	assert.InDelta(t, 64/6.0, got.DecodeTokPerSec, 1e-9)
}

func run(prefill, decode float64) speed.Run {
	return speed.Run{Name: "512-token", PromptTokens: 512, GeneratedTokens: 64, PrefillTokPerSec: prefill, DecodeTokPerSec: decode}
}

// TestJudge: a run whose prefill is under OneTokenMargin times its decode is a slow path,
// one at the margin is not; the structural finding stands alone; failed runs and
// unresolved rates judge nothing.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    speed.Result
		want int
	}{
		{"batched prefill", speed.Result{Runs: []speed.Run{run(400, 20)}}, 0},
		{"exactly at the margin", speed.Result{Runs: []speed.Run{run(40, 20)}}, 0},
		{"just under the margin", speed.Result{Runs: []speed.Run{run(39.9, 20)}}, 1},
		{"prefill no faster than decode", speed.Result{Runs: []speed.Run{run(21, 20), run(400, 20)}}, 1},
		{"both prompts slow", speed.Result{Runs: []speed.Run{run(21, 20), run(22, 20)}}, 2},
		{"the structure says one token a call", speed.Result{Structure: speed.Structure{OneTokenPerCall: true, Why: "fixed"}, Runs: []speed.Run{run(400, 20)}}, 1},
		{"a failed run", speed.Result{Runs: []speed.Run{{Name: "x", RunnerError: "RuntimeError: boom"}}}, 0},
		{"an unresolved decode", speed.Result{Runs: []speed.Run{run(10, 0)}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			speed.Judge(&tc.r)
			assert.Len(t, tc.r.SlowPath, tc.want, tc.r.SlowPath)
			assert.Equal(t, tc.want > 0, tc.r.Slow())
			assert.NotNil(t, tc.r.SlowPath, "an empty finding list is [] in the report, not null")
		})
	}
}

// TestFromOutput: the driver's runs become figures, a run without stats a runner error.
func TestFromOutput(t *testing.T) {
	out := speed.Output{LoadSeconds: 1.5, RSSAfterLoadBytes: 300e6, Runs: []speed.RunOutput{
		{Name: "512-token", Stats: &speed.RunnerStats{PromptTokens: 512, GeneratedTokens: 64, InferenceStart: 0, PromptEvalEnd: 500, FirstToken: 500, InferenceEnd: 4500, UnitsPerSecond: 1000}},
		{Name: "2304-token", RunnerError: "RuntimeError: out of cache"},
		{Name: "empty"},
	}}
	r := speed.FromOutput(out, speed.Host{Arch: "arm64", NProc: 8, Note: speed.HostNote}, speed.Structure{}, []string{"why"})
	require.Len(t, r.Runs, 3)
	assert.InDelta(t, 1024, r.Runs[0].PrefillTokPerSec, 1e-9)
	assert.InDelta(t, 16, r.Runs[0].DecodeTokPerSec, 1e-9)
	assert.Equal(t, "RuntimeError: out of cache", r.Runs[1].RunnerError)
	assert.Equal(t, "the runner reported no stats", r.Runs[2].RunnerError)
	assert.Empty(t, r.SlowPath)
	assert.Equal(t, []string{"why"}, r.Skipped)
	assert.Contains(t, r.Line(), "arm64, 8 CPUs")
	assert.Contains(t, r.Line(), "prefill 1024.0 tokens/s, decode 16.0 tokens/s")
	assert.Contains(t, r.Line(), speed.HostNote)
	assert.Equal(t, "not timed (the reply ended after 1 tokens)", speed.Run{GeneratedTokens: 1}.Decode())
}

func program(t *testing.T, dynamic bool) *pte.Program {
	t.Helper()
	b, err := ptetest.ExportLLMProgram(dynamic)
	require.NoError(t, err)
	p, err := pte.Open(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	return p
}

// TestReadStaticShape: a file built without dynamic shapes (export_llm's
// enable_dynamic_shape false, KV cache kept) is read as one token a call; the same file
// built with them is not.
func TestReadStaticShape(t *testing.T) {
	st := speed.Read(program(t, false))
	require.NotNil(t, st.DynamicShape)
	assert.False(t, *st.DynamicShape)
	assert.True(t, st.OneTokenPerCall)
	assert.Contains(t, st.Why, "enable_dynamic_shape is false")

	st = speed.Read(program(t, true))
	assert.False(t, st.OneTokenPerCall, st.Why)
}

// TestRefusable: the structure refuses anywhere; the measure refuses only on ARM, whose
// kernels are the phone's.
func TestRefusable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		arch       string
		structural bool
		prefill    float64
		want       bool
	}{
		{"measured slow on ARM", "arm64", false, 21, true},
		{"measured slow on x86", "amd64", false, 21, false},
		{"structure on x86", "amd64", true, 400, true},
		{"fast on ARM", "arm64", false, 400, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := speed.Result{Host: speed.Host{Arch: tc.arch}, Structure: speed.Structure{OneTokenPerCall: tc.structural}, Runs: []speed.Run{run(tc.prefill, 20)}}
			speed.Judge(&r)
			assert.Equal(t, tc.want, r.Refusable())
		})
	}
}
