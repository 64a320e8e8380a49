package run

import (
	"context"
	"io"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// TestDefaultStageRules drives each backend's rule set with a stand-in that prints the
// lines the real tool prints (docs/research/run.md), with known pauses between them.
func TestDefaultStageRules(t *testing.T) {
	const info = "p:[INFO 2026-12-02 10:00:00,000 x.py:1] "
	tests := []struct {
		name  string
		rules []StageRule
		steps []string
		want  map[string]float64 // stage → seconds
		count map[string]int
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
			want: map[string]float64{"load": 0.3, "quantize": 0.6, "export": 0.3, "lower": 0.9, "save": 0.2, "other": 0.3},
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
			want:  map[string]float64{"load": 0.3, "quantize": 0.6, "calibration": 0.8, "htp_compile": 0.8, "other": 0.4},
			count: map[string]int{"quantize": 2, "calibration": 1},
		},
		{
			name:  "mediatek export script",
			rules: StagesMediaTek,
			steps: append(append([]string{"s:200ms", "p:Preparing Model Calibration Inputs...", "s:400ms"},
				mtkChunk("0")...), mtkChunk("1")...),
			want:  map[string]float64{"load": 0.2, "calibration_inputs": 0.4, "aten_export": 0.8, "calibration": 0.6, "lowering": 0.6, "other": 0.2},
			count: map[string]int{"calibration": 2, "lowering": 2, "aten_export": 4},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // the scripts mostly sleep
			res, err := Tool(context.Background(), Spec{
				Name: "stages", Argv: fake(tc.steps...), Output: io.Discard, SampleEvery: -1, Stages: tc.rules,
			})
			if err != nil {
				t.Fatal(err)
			}
			var sum, shares float64
			for _, st := range res.Timings.Stages {
				sum += st.Seconds
				shares += st.Share
			}
			for stage, want := range tc.want {
				got, ok := res.Timings.Stage(stage)
				if !ok {
					t.Errorf("no stage %q in %+v", stage, res.Timings)
					continue
				}
				// Sleeps only lengthen; allow for rounding and a slow scheduler.
				if got.Seconds < want-0.1 || got.Seconds > want+0.35 {
					t.Errorf("%s = %.1f s, want about %.1f s (%+v)", stage, got.Seconds, want, res.Timings)
				}
			}
			for stage, want := range tc.count {
				if got, _ := res.Timings.Stage(stage); got.Count != want {
					t.Errorf("%s opened %d times, want %d", stage, got.Count, want)
				}
			}
			if len(res.Timings.Stages) != len(tc.want) {
				t.Errorf("stages = %+v, want exactly %v", res.Timings.Stages, tc.want)
			}
			if math.Abs(sum-res.Timings.TotalSeconds) > 0.1*float64(len(res.Timings.Stages)) || math.Abs(shares-1) > 0.01 {
				t.Errorf("stages add to %.1f s (share %.3f), total %.1f s", sum, shares, res.Timings.TotalSeconds)
			}
		})
	}
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

func TestStagesFor(t *testing.T) {
	tests := []struct {
		backend string
		want    []StageRule
	}{
		{"xnnpack", StagesXNNPACK}, {"vulkan", StagesXNNPACK}, {"qnn", StagesQNN},
		{"mediatek", StagesMediaTek}, {"mtk", StagesMediaTek}, {"enn", nil},
	}
	for _, tc := range tests {
		got := StagesFor(tc.backend)
		if len(got) != len(tc.want) || (len(got) > 0 && &got[0] != &tc.want[0]) {
			t.Errorf("StagesFor(%q) = %d rules, want the %d-rule set", tc.backend, len(got), len(tc.want))
		}
	}
	for _, set := range [][]StageRule{StagesXNNPACK, StagesQNN, StagesMediaTek} {
		for i, r := range set {
			if err := r.validate(); err != nil {
				t.Errorf("default rule %d: %v", i, err)
			}
		}
	}
}
