package run

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/golden"
)

// script prints on both streams, including lines that look like workflow commands, a
// progress bar, and a last line without a newline.
var script = []string{
	"p:Loading checkpoint", "e:[WARNING] something on stderr", "p:::error::not a real annotation",
	"r:Calibrating:   0%", "r:Calibrating:  50%", "r:Calibrating: 100%", "n",
	"p:done",
}

var tokenRe = regexp.MustCompile(`[0-9a-f]{32}`)

// normalize replaces what changes between runs: the stand-in's path and the stop token.
func normalize(out string) string {
	out = strings.ReplaceAll(out, fakeprog, "FAKEPROG")
	return tokenRe.ReplaceAllString(out, "TOKEN")
}

// framed is what Tool prints of the script in mode, normalized.
func framed(t *testing.T, mode LogMode) string {
	t.Helper()
	var buf bytes.Buffer
	_, err := Tool(context.Background(), Spec{
		Name: "export_llm", Argv: fake(script...), Output: &buf, Mode: mode,
		SampleEvery: -1, Secrets: []string{"hf_NotPrinted"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return normalize(buf.String())
}

func TestOutputFraming(t *testing.T) {
	tests := []struct {
		name   string
		mode   LogMode
		golden string
	}{
		{"prefixed", LogPrefixed, "output-prefixed.golden"},
		{"grouped", LogGrouped, "output-grouped.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GITHUB_ACTIONS", "")
			golden.Check(t, filepath.Join("testdata", tc.golden), []byte(framed(t, tc.mode)))
		})
	}
}

// TestOutputAuto: LogAuto frames as LogGrouped on Actions and as LogPrefixed elsewhere,
// byte for byte, so the two golden files above hold it too.
func TestOutputAuto(t *testing.T) {
	tests := []struct {
		name string
		env  string // GITHUB_ACTIONS
		want LogMode
	}{
		{"on actions", "true", LogGrouped},
		{"locally", "", LogPrefixed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GITHUB_ACTIONS", tc.env)
			assert.Equal(t, framed(t, tc.want), framed(t, LogAuto))
		})
	}
}

// TestGroupedStopsCommands checks the property the golden file shows: on Actions, the tool's
// own lines sit between ::stop-commands::T and ::T::, inside one group.
func TestGroupedStopsCommands(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Tool(context.Background(), Spec{
		Name: "t", Argv: fake("p:::add-mask::x", "p:::endgroup::"), Output: &buf, Mode: LogGrouped, SampleEvery: -1,
	}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("got %d lines: %q", len(lines), lines)
	}
	token, ok := strings.CutPrefix(lines[2], "::stop-commands::")
	if lines[0] != "::group::t" || !ok || len(token) != 32 || lines[5] != "::"+token+"::" || lines[6] != "::endgroup::" {
		t.Errorf("frame = %q", lines)
	}
	if lines[3] != "::add-mask::x" || lines[4] != "::endgroup::" {
		t.Errorf("tool lines = %q", lines[3:5])
	}
}

func TestProgressThrottle(t *testing.T) {
	steps := []string{"r:bar 1", "r:bar 2", "r:bar 3", "n", "p:after"}
	tests := []struct {
		name  string
		every int64 // ProgressEvery in ns
		want  string
	}{
		{"throttled", int64(1 << 62), "[p] bar 1\n[p] bar 3\n[p] after\n"},
		{"all", -1, "[p] bar 1\n[p] bar 2\n[p] bar 3\n[p] after\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := Tool(context.Background(), Spec{
				Name: "p", Argv: fake(steps...), Output: &buf, Mode: LogPrefixed, SampleEvery: -1,
				ProgressEvery: durationNS(tc.every),
			}); err != nil {
				t.Fatal(err)
			}
			_, body, _ := strings.Cut(buf.String(), "\n") // drop the command line
			if body != tc.want {
				t.Errorf("output = %q, want %q", body, tc.want)
			}
		})
	}
}

func TestLineSplitting(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"newlines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"crlf across writes", []string{"a\r", "\nb\r\n"}, []string{"a", "b"}},
		{"lone cr is a redraw", []string{"\rx 1\rx 2\n"}, []string{"x 1", "x 2"}},
		{"last line unterminated", []string{"a\nb"}, []string{"a", "b"}},
		{"split mid line", []string{"he", "llo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"empty lines kept", []string{"a\n\nb\n"}, []string{"a", "", "b"}},
		{"a bar clearing itself is dropped", []string{"a\n\r100%\r    \r"}, []string{"a", "100%"}},
		{"cr at the end", []string{"a\r"}, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := testSink(&buf, nil)
			s.progressEvery = -1
			for _, w := range tc.writes {
				s.Write([]byte(w))
			}
			s.close()
			got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLongLineIsCut(t *testing.T) {
	var buf bytes.Buffer
	s := testSink(&buf, nil)
	s.Write(bytes.Repeat([]byte("x"), maxLineBytes+10))
	s.close()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 || len(lines[0]) != maxLineBytes || len(lines[1]) != 10 {
		t.Errorf("got %d lines of %d bytes", len(lines), len(lines[0]))
	}
	if got := s.tail.last()[0]; len(got) > maxTailLineBytes+len("…") {
		t.Errorf("tail line is %d bytes", len(got))
	}
}

// TestTranscript checks that the transcript has every line, throttled redraws included,
// stamped with the run's clock, with secrets masked. TestToolTimesLinesOnArrival shows the
// stamps following the clock.
func TestTranscript(t *testing.T) {
	var out, transcript bytes.Buffer
	clk := newFakeClock(time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC))
	_, err := Tool(context.Background(), Spec{
		Name: "t", Argv: fake("p:one", "r:bar 1", "r:bar 2", "r:bar 3", "n", "p:key hf_x"), Output: &out, Transcript: &transcript,
		Mode: LogPrefixed, SampleEvery: -1, ProgressEvery: time.Hour, Secrets: []string{"hf_x"}, clock: clk,
	})
	require.NoError(t, err)
	var want strings.Builder
	for _, line := range []string{"one", "bar 1", "bar 2", "bar 3", "key ***"} {
		want.WriteString("2026-09-12T10:00:00.000Z " + line + "\n")
	}
	assert.Equal(t, want.String(), transcript.String())
	_, body, _ := strings.Cut(out.String(), "\n")
	assert.NotContains(t, body, "bar 2", "throttled redraw reached the log")
}

func TestWarnsWithoutUnbufferedPython(t *testing.T) {
	tests := []struct {
		name   string
		mode   LogMode
		env    []string
		stages []StageRule
		want   string // "" for no warning
	}{
		{"local", LogPrefixed, nil, mtkRules, "[w] warning: w: PYTHONUNBUFFERED is not set"},
		{"actions", LogGrouped, nil, mtkRules, "::warning::w: PYTHONUNBUFFERED is not set"},
		{"set", LogPrefixed, []string{"PYTHONUNBUFFERED=1"}, mtkRules, ""},
		{"no stages", LogPrefixed, nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := Tool(context.Background(), Spec{
				Name: "w", Argv: fake("p:x"), Env: tc.env, Output: &buf, Mode: tc.mode, SampleEvery: -1, Stages: tc.stages,
			}); err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(buf.String(), "PYTHONUNBUFFERED")
			if tc.want == "" && got || tc.want != "" && !strings.Contains(buf.String(), tc.want) {
				t.Errorf("output = %q, want warning %q", buf.String(), tc.want)
			}
		})
	}
}
