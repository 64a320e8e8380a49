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
		SampleEvery: -1, Stages: mtkRules, clock: clk,
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

// TestReplay: Replay times output as the live sink does (a progress redraw opens its stage
// when it arrives), ends the run at the last write, and refuses a rule Tool would refuse.
func TestReplay(t *testing.T) {
	ms := time.Millisecond
	got, err := Replay(mtkRules, []Write{
		{After: 200 * ms, Data: "Preparing Model Calibration Inputs...\n"},
		{After: 400 * ms, Data: "\rCalibrating Model:   0%"}, {After: 300 * ms, Data: "\rCalibrating Model: 100%\n"},
		{After: 100 * ms},
	})
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(Timings{TotalSeconds: 1, Stages: []StageTime{
		{"load", 0.2, 0.2, 1}, {"calibration_inputs", 0.4, 0.4, 1}, {"calibration", 0.4, 0.4, 1}, {"other", 0, 0, 0},
	}}, got), "timings (-want +got)")
	assert.Equal(t, got, play(t, mtkRules, []string{"s:200ms", "p:Preparing Model Calibration Inputs...", "s:400ms",
		"r:Calibrating Model:   0%", "s:300ms", "r:Calibrating Model: 100%", "n", "s:100ms"}), "as the sink times it live")
	_, err = Replay([]StageRule{{Stage: "other", AtStart: true}}, nil)
	assert.EqualError(t, err, `replay: stage rule 0: stage name "other" is reserved for unclaimed time`)
}
