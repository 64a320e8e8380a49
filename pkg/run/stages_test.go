package run

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testSink(out io.Writer, clock *stageClock) *lineSink {
	if clock == nil {
		clock = newStageClock(nil, time.Now())
	}
	return &lineSink{out: out, tail: newTail(DefaultTailLines), clock: clock, now: time.Now, progressEvery: DefaultProgressEvery}
}

func durationNS(ns int64) time.Duration { return time.Duration(ns) }

func TestStageClock(t *testing.T) {
	re := regexp.MustCompile
	type ev struct {
		at   float64
		line string
	}
	tests := []struct {
		name  string
		rules []StageRule
		lines []ev
		end   float64
		want  Timings
	}{
		{
			name: "sequential stages from process start",
			rules: []StageRule{
				{Stage: "load", AtStart: true},
				{Stage: "a", Start: re(`^A`)},
				{Stage: "b", Start: re(`^B`), End: re(`B done`)},
			},
			lines: []ev{{1, "A"}, {3, "B"}, {4, "B done"}},
			end:   5,
			want: Timings{TotalSeconds: 5, Stages: []StageTime{
				{"load", 1, 0.2, 1}, {"a", 2, 0.4, 1}, {"b", 1, 0.2, 1}, {"other", 1, 0.2, 0},
			}},
		},
		{
			name:  "a repeated marker keeps the stage open; reopened stages add up",
			rules: []StageRule{{Stage: "a", Start: re(`^A`)}, {Stage: "b", Start: re(`^B`)}},
			lines: []ev{{0, "A 0%"}, {1, "A 50%"}, {2, "B"}, {3, "A again"}},
			end:   4,
			want: Timings{TotalSeconds: 4, Stages: []StageTime{
				{"a", 3, 0.75, 2}, {"b", 1, 0.25, 1}, {"other", 0, 0, 0},
			}},
		},
		{
			name:  "an end closes only its own stage",
			rules: []StageRule{{Stage: "a", Start: re(`^A`), End: re(`stop`)}, {Stage: "b", Start: re(`^B`)}},
			lines: []ev{{0, "B"}, {1, "stop"}, {2, "A"}, {3, "stop"}},
			end:   4,
			want: Timings{TotalSeconds: 4, Stages: []StageTime{
				{"b", 2, 0.5, 1}, {"a", 1, 0.25, 1}, {"other", 1, 0.25, 0},
			}},
		},
		{
			name:  "a stage open at exit closes at exit",
			rules: []StageRule{{Stage: "a", Start: re(`^A`)}},
			lines: []ev{{1, "A"}},
			end:   3,
			want:  Timings{TotalSeconds: 3, Stages: []StageTime{{"a", 2, 0.667, 1}, {"other", 1, 0.333, 0}}},
		},
		{
			name:  "explicit durations",
			rules: []StageRule{{Stage: "quantize", Duration: re(`Time for quantizing: (?P<seconds>[0-9.]+)`)}},
			lines: []ev{{1, "[INFO] Time for quantizing: 12.5"}, {2, "Time for quantizing: nan"}},
			end:   20,
			want:  Timings{TotalSeconds: 20, Stages: []StageTime{{"quantize", 12.5, 0.625, 1}, {"other", 7.5, 0.375, 0}}},
		},
		{
			name:  "no rules, no stages",
			lines: []ev{{1, "anything"}},
			end:   2.25,
			want:  Timings{TotalSeconds: 2.3, Stages: []StageTime{}},
		},
	}
	t0 := time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newStageClock(tc.rules, t0)
			for _, l := range tc.lines {
				c.line(at(l.at), l.line)
			}
			if diff := cmp.Diff(tc.want, c.finish(at(tc.end))); diff != "" {
				t.Errorf("timings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultStageRules feeds each backend's rule set the lines the real tool prints
// (docs/research/run.md), byte for byte as the stand-in writes them, on a clock that moves
// only at the script's pauses: every figure is exact.
func TestDefaultStageRules(t *testing.T) {
	const info = "p:[INFO 2026-12-02 10:00:00,000 x.py:1] "
	tests := []struct {
		name  string
		rules []StageRule
		steps []string
		want  Timings
	}{
		{
			name:  "xnnpack export_llm",
			rules: StagesXNNPACK,
			steps: []string{
				"s:300ms", info + "Checkpoint dtype: torch.bfloat16", "s:600ms",
				info + "Model after source transforms: Transformer(", "p:  (layers): ModuleList()", "p:)",
				info + "Exporting with:", info + "inputs: (tensor([[2, 3, 4]]),)", "s:300ms",
				info + "Lowering model using following partitioner(s): ", info + "--> XnnpackPartitioner", "s:900ms",
				info + "Required memory for activation in bytes: [0, 1048576]", "s:200ms",
				info + "Saved exported program to /work/out/Qwen3-0.6B-8da4w-2k.pte", "s:300ms",
			},
			want: Timings{TotalSeconds: 2.6, Stages: []StageTime{
				{"load", 0.3, 0.115, 1}, {"quantize", 0.6, 0.231, 1}, {"export", 0.3, 0.115, 1},
				{"lower", 0.9, 0.346, 1}, {"save", 0.2, 0.077, 1}, {"other", 0.3, 0.115, 0},
			}},
		},
		{
			name:  "qnn llama.py",
			rules: StagesQNN,
			steps: []string{
				"s:200ms", info + "calling HybridTextDecoder::__init__", "s:100ms",
				info + "calling MultiModalManager::quantize", "s:300ms", info + "calling TextDecoder::quantize", "s:200ms",
				"r:  0%|          | 0/1 [00:00<?, ?it/s]", "s:600ms", "r:100%|##########| 1/1 [00:00<00:00]", "n",
				info + "Calibration complete for prepare_pt2e", "s:300ms",
				info + "TextDecoder::quantize completed in 1.4s", info + "MultiModalManager::quantize completed in 1.7s", "s:200ms",
				info + "calling MultiModalManager::compile", info + "calling HybridTextDecoder::compile", "s:800ms",
				info + "HybridTextDecoder::compile completed in 0.8s", info + "MultiModalManager::compile completed in 0.8s",
				"s:200ms", "p:Finish compile_only and save to /work/artifact",
			},
			// quantize is the 0.3 s before calibration and the 0.3 s after it.
			want: Timings{TotalSeconds: 2.9, Stages: []StageTime{
				{"load", 0.3, 0.103, 1}, {"quantize", 0.6, 0.207, 2}, {"calibration", 0.8, 0.276, 1},
				{"htp_compile", 0.8, 0.276, 1}, {"other", 0.4, 0.138, 0},
			}},
		},
		{
			name:  "mediatek export script",
			rules: StagesMediaTek,
			steps: append(append([]string{"s:200ms", "p:Preparing Model Calibration Inputs...", "s:400ms"},
				mtkChunk("0")...), mtkChunk("1")...),
			// Per chunk: aten_export 0.2 s before calibration and 0.2 s after, calibration
			// 0.3 s from its first redraw, lowering 0.3 s, 0.1 s after the Dest line.
			want: Timings{TotalSeconds: 2.8, Stages: []StageTime{
				{"load", 0.2, 0.071, 1}, {"calibration_inputs", 0.4, 0.143, 1}, {"aten_export", 0.8, 0.286, 4},
				{"calibration", 0.6, 0.214, 2}, {"lowering", 0.6, 0.214, 2}, {"other", 0.2, 0.071, 0},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Empty(t, cmp.Diff(tc.want, play(t, tc.rules, tc.steps)), "timings (-want +got)")
		})
	}
}

// play writes what fakeprog would print for steps into a line sink, one write per step,
// with the clock moved on by each "s:" step instead of sleeping, and returns the timings.
func play(t *testing.T, rules []StageRule, steps []string) Timings {
	t.Helper()
	t0 := time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)
	now := t0
	s := testSink(io.Discard, newStageClock(rules, t0))
	s.now = func() time.Time { return now }
	for _, step := range steps {
		op, arg, _ := strings.Cut(step, ":")
		switch op {
		case "p", "e":
			s.Write([]byte(arg + "\n"))
		case "r":
			s.Write([]byte("\r" + arg))
		case "n":
			s.Write([]byte("\n"))
		case "s":
			d, err := time.ParseDuration(arg)
			require.NoError(t, err, step)
			now = now.Add(d)
		default:
			require.FailNow(t, "unknown step", step)
		}
	}
	s.close()
	return s.clock.finish(now)
}

// TestToolTimesLinesOnArrival runs a stand-in through Tool on a clock the test moves when
// it reads each line, while the stand-in waits: each line is timed when it arrives, not
// when the tool exits, and the transcript carries the same instants.
func TestToolTimesLinesOnArrival(t *testing.T) {
	t0 := time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)
	clk, g := newFakeClock(t0), newGates(t)
	steps := map[string]struct {
		advance time.Duration
		release string
	}{
		"[stages] starting": {200 * time.Millisecond, "a"},
		"[stages] Preparing Model Calibration Inputs...": {400 * time.Millisecond, "b"},
		"[stages] Exporting Chunk 0 to PTE":              {800 * time.Millisecond, "c"},
	}
	out := &hookWriter{hook: func(line string) {
		if st, ok := steps[line]; ok {
			clk.Advance(st.advance)
			g.open(st.release)
		}
	}}
	var transcript bytes.Buffer
	res, err := Tool(context.Background(), Spec{
		Name: "stages", Argv: fake("p:starting", g.wait("a"), "p:Preparing Model Calibration Inputs...", g.wait("b"),
			"p:Exporting Chunk 0 to PTE", g.wait("c")),
		Env: []string{"PYTHONUNBUFFERED=1"}, Output: out, Transcript: &transcript, Mode: LogPrefixed,
		SampleEvery: -1, Stages: StagesMediaTek, clock: clk,
	})
	require.NoError(t, err)
	want := Timings{TotalSeconds: 1.4, Stages: []StageTime{
		{"load", 0.2, 0.143, 1}, {"calibration_inputs", 0.4, 0.286, 1}, {"aten_export", 0.8, 0.571, 1}, {"other", 0, 0, 0},
	}}
	assert.Empty(t, cmp.Diff(want, res.Timings), "timings (-want +got)")
	assert.Equal(t, 1.4, res.Seconds)
	assert.Equal(t, "2026-09-12T10:00:00Z", res.StartedAt)
	assert.Equal(t, "2026-09-12T10:00:00.000Z starting\n"+
		"2026-09-12T10:00:00.200Z Preparing Model Calibration Inputs...\n"+
		"2026-09-12T10:00:00.600Z Exporting Chunk 0 to PTE\n", transcript.String())
}

// mtkChunk is what qwen.py prints for one chunk (ExecuTorch v1.4.0, export_to_et_ir).
func mtkChunk(i string) []string {
	return []string{
		"p:Exporting Chunk " + i + " to PTE", "p:Getting pre autograd ATen Dialect Graph", "s:200ms",
		"r:Calibrating Model:   0%|          | 0/9 [00:00<?, ?it/s]", "s:300ms",
		"r:Calibrating Model: 100%|##########| 9/9 [00:00<00:00]", "n",
		"p:Getting ATen Dialect Graph for Qwen3-0.6B_A16W4_4_chunks 128t512c chunk " + i, "s:100ms",
		"p:Getting ATen Dialect Graph for Qwen3-0.6B_A16W4_4_chunks 1t512c chunk " + i, "s:100ms",
		"p:Delegating Edge Program to Neuropilot Backend", "s:300ms",
		"p:Transforming delegated program to executorch backend", "p:", "p: Model Size: 86052736",
		"p:Qwen3-0.6B_A16W4_4_chunks ET Model chunk " + i + " Dest: pte/x/x_" + i + ".pte", "s:100ms",
	}
}

// TestPartialLineTimesStage checks that an unterminated progress bar starts its stage when
// its text arrives, even when the text comes in pieces, and counts once.
func TestPartialLineTimesStage(t *testing.T) {
	t0 := time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	clock := newStageClock([]StageRule{{Stage: "calibration", Start: regexp.MustCompile(`Calibrating Model`)}}, t0)
	s := testSink(io.Discard, clock)
	writes := []struct {
		at   int
		data string
	}{
		{1, "\rCalibr"}, {2, "ating Model:   0%"}, {4, "\rCalibrating Model:  50%"}, {5, "\rCalibrating Model: 100%\n"},
	}
	for _, w := range writes {
		now := t0.Add(time.Duration(w.at) * time.Second)
		s.now = func() time.Time { return now }
		s.Write([]byte(w.data))
	}
	got := clock.finish(t0.Add(6 * time.Second))
	want := Timings{TotalSeconds: 6, Stages: []StageTime{{"calibration", 4, 0.667, 1}, {"other", 2, 0.333, 0}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timings (-want +got):\n%s", diff)
	}
}

func TestDefaultRulesValid(t *testing.T) {
	for _, set := range [][]StageRule{StagesXNNPACK, StagesQNN, StagesMediaTek} {
		for i, r := range set {
			if err := r.validate(); err != nil {
				t.Errorf("default rule %d: %v", i, err)
			}
		}
	}
}
