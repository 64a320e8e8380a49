package smoke_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

func pieces(s ...string) []string { return s }

func repeat(p string, n int) []string { return strings.Split(strings.Repeat(p+"\x00", n-1)+p, "\x00") }

// TestJudge applies the smoke rules: a token at least; not degenerate (no control
// character but tab and line ends, not whitespace only, and from 8 pieces on no one piece
// at 80% or more); "paris" from 500M parameters; runner errors recorded.
func TestJudge(t *testing.T) {
	rate := 12.5
	stats := &smoke.Stats{PrefillTokPerSec: &rate, DecodeTokPerSec: &rate, PromptTokens: 20, GeneratedTokens: 3}
	for _, tc := range []struct {
		name     string
		out      smoke.Output
		params   int64
		required bool
		problems []string
	}{
		{"135M rambles and passes", smoke.Output{Tokens: pieces("I", " think", " Lyon"), Reply: "I think Lyon", Stats: stats}, 134_515_008, false, nil},
		{"600M answers Paris", smoke.Output{Tokens: pieces("The", " capital", " is", " Paris", "."), Reply: "The capital is Paris."}, 751_632_384, true, nil},
		{"500M exactly must answer", smoke.Output{Tokens: pieces("Lyon"), Reply: "Lyon"}, 500_000_000, true,
			[]string{`a model of 500000000 parameters must answer "What is the capital of France?" with "paris"; it replied "Lyon"`}},
		{"499,999,999 need not", smoke.Output{Tokens: pieces("Lyon"), Reply: "Lyon"}, 499_999_999, false, nil},
		{"no token", smoke.Output{}, 100, false, []string{"the file generated no token"}},
		{"no token from a large model is one problem", smoke.Output{}, 4_000_000_000, true, []string{"the file generated no token"}},
		{"one piece 8 times", smoke.Output{Tokens: repeat("!", 8), Reply: strings.Repeat("!", 8)}, 100, false,
			[]string{`the reply is degenerate: all 8 pieces are "!"`}},
		{"one piece 7 times is short, not degenerate", smoke.Output{Tokens: repeat("!", 7), Reply: strings.Repeat("!", 7)}, 100, false, nil},
		// One piece at 80% of 8 or more is degenerate too (DegenerateShare): the reference's
		// rule, all the same, let these through.
		{"one piece 31 times of 32", smoke.Output{Tokens: append(repeat(" Paris", 31), "."), Reply: "..."}, 100, false,
			[]string{`the reply is degenerate: 31 of its 32 pieces are " Paris" (80% or more of one piece is degenerate)`}},
		{"one piece at 80% exactly", smoke.Output{Tokens: append(repeat("!", 8), "?", "?"), Reply: "!!!!!!!!??"}, 100, false,
			[]string{`the reply is degenerate: 8 of its 10 pieces are "!" (80% or more of one piece is degenerate)`}},
		{"one piece just under 80%", smoke.Output{Tokens: append(repeat("!", 7), "?", "?"), Reply: "!!!!!!!??"}, 100, false, nil},
		// Control characters other than tab, newline and carriage return, and replies of
		// whitespace only, are degenerate at any length.
		{"27 \\x18 and 5 \\r under 500M", smoke.Output{Tokens: append(repeat("\x18", 27), repeat("\r", 5)...), Reply: strings.Repeat("\x18", 27) + strings.Repeat("\r", 5)}, 134_515_008, false,
			[]string{"the reply is degenerate: it holds the control character U+0018"}},
		{"a NUL inside an answer", smoke.Output{Tokens: pieces("Paris", "\x00", "."), Reply: "Paris\x00."}, 751_632_384, true,
			[]string{"the reply is degenerate: it holds the control character U+0000"}},
		{"a C1 control", smoke.Output{Tokens: pieces("Paris", "\u0085"), Reply: "Paris\u0085"}, 100, false,
			[]string{"the reply is degenerate: it holds the control character U+0085"}},
		{"newlines only", smoke.Output{Tokens: repeat("\n", 32), Reply: strings.Repeat("\n", 32)}, 100, false,
			[]string{"the reply is degenerate: it is whitespace only (" + strconv.Quote(strings.Repeat("\n", 32)) + ")"}},
		{"whitespace and line ends only, short", smoke.Output{Tokens: pieces(" ", "\r", "\n", "\t"), Reply: " \r\n\t"}, 100, false,
			[]string{"the reply is degenerate: it is whitespace only (\" \\r\\n\\t\")"}},
		{"one space", smoke.Output{Tokens: pieces(" "), Reply: " "}, 100, false,
			[]string{"the reply is degenerate: it is whitespace only (\" \")"}},
		// Sound replies still pass: words, with a newline or two, or a Windows line end.
		{"Paris is the answer.", smoke.Output{Tokens: pieces("Paris", " is", " the", " answer", "."), Reply: "Paris is the answer."}, 751_632_384, true, nil},
		{"two paragraphs", smoke.Output{Tokens: pieces("The", " capital", " of", " France", " is", " Paris", ".", "\n", "\n", "It", " is", " also", " its", " largest", " city", "."),
			Reply: "The capital of France is Paris.\n\nIt is also its largest city."}, 751_632_384, true, nil},
		{"a CRLF line end and a tab", smoke.Output{Tokens: pieces("Paris", ".", "\r\n", "\t", "Yes", "."), Reply: "Paris.\r\n\tYes."}, 751_632_384, true, nil},
		{"runner error", smoke.Output{RunnerError: "RuntimeError: method forward failed"}, 100, false,
			[]string{"runner error: RuntimeError: method forward failed", "the file generated no token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := smoke.Judge(tc.out, tc.params)
			assert.Equal(t, "smoke", r.Kind)
			assert.Equal(t, tc.required, r.AnswerRequired)
			assert.Equal(t, len(tc.out.Tokens), r.Tokens)
			assert.Equal(t, tc.out.Stats, r.Stats)
			assert.Equal(t, len(tc.problems) == 0, r.Passed, r.Problems)
			require.Len(t, r.Problems, len(tc.problems), r.Problems)
			for i, p := range tc.problems {
				assert.Equal(t, p, r.Problems[i])
			}
			if r.Passed {
				assert.Contains(t, r.Verdict(), "smoke run: passed")
			} else {
				assert.Contains(t, r.Verdict(), "smoke run: failed: "+r.Problems[0])
			}
		})
	}
}

func TestJudgeAnsweredIgnoresCase(t *testing.T) {
	r := smoke.Judge(smoke.Output{Tokens: pieces("PARIS"), Reply: "PARIS"}, 1_000_000_000)
	assert.True(t, r.Answered)
	assert.True(t, r.Passed)
}
