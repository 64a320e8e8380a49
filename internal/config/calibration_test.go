package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCalibrationRows: the committed calibration has the reference's shape (48 search
// rows, 24 known questions, 32 general prompts, 48 and 128 reply tokens, a 512-token
// prompt limit), and no row is a gate row or names a gate subject.
func TestCalibrationRows(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	k := c.Calibration
	assert.Len(t, k.Search, 48)
	assert.Len(t, k.Known, 24)
	assert.Len(t, k.General, 32)
	assert.Equal(t, 48, k.AppReplyTokens)
	assert.Equal(t, 128, k.GeneralReplyTokens)
	assert.Equal(t, 512, k.PromptLimit)
	gate := map[string]bool{}
	for _, r := range c.Gate.Search {
		gate[r.Question] = true
	}
	for _, q := range c.Gate.Quiet {
		gate[q] = true
	}
	texts := append(append([]string{}, k.Known...), k.General...)
	for _, r := range k.Search {
		assert.Contains(t, r.Question, r.Subject, "a search row's question names its subject")
		texts = append(texts, r.Question, r.Subject)
	}
	for _, text := range texts {
		assert.False(t, gate[text], "%q is a gate row", text)
		for _, r := range c.Gate.Search {
			assert.NotContains(t, strings.ToLower(text), strings.ToLower(r.Subject), "%q names the gate subject %s", text, r.Subject)
		}
	}
}

func TestCalibrationErrors(t *testing.T) {
	y, v := readRepoConfig(t)
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"a gate row as a known question", `    - "How many legs does a spider have?"`, `    - "What is 8 times 7?"`,
			[]string{"calibration.known.1", `"What is 8 times 7?" is a gate row`, "never saw"}},
		{"a gate search row", `{question: "Who wrote the novel Kindred?", subject: Kindred}`, `{question: "Who wrote the novel Mercy?", subject: Kindred}`,
			[]string{"calibration.search.14.question", "is a gate row"}},
		{"a gate subject, other case", `{question: "Which country is Tartu in?", subject: Tartu}`, `{question: "Which country is Tartu in?", subject: OSTRAVA}`,
			[]string{"calibration.search.20.subject", `"OSTRAVA" shares the gate subject Ostrava`}},
		{"a general prompt naming a gate subject", `"Write a haiku about autumn rain."`, `"Write a haiku about a night in Rijeka."`,
			[]string{"calibration.general.0", "names the gate subject Rijeka"}},
		{"a duplicate", `    - "What is 12 plus 15?"`, `    - "How many legs does a spider have?"`,
			[]string{"calibration.known.2", "listed twice"}},
		{"an empty subject", "subject: Solaris}", `subject: ""}`, []string{"calibration.search.15.subject: is empty"}},
		{"no prompt limit", "  prompt_limit: 512", "  prompt_limit: 0", []string{"calibration.prompt_limit: must be positive, not 0"}},
		{"no reply", "  app_reply_tokens: 48", "  app_reply_tokens: -1", []string{"calibration.app_reply_tokens: must be positive, not -1"}},
		{"unknown key", "  prompt_limit:", "  prompt_limt:", []string{"calibration.prompt_limt: unknown key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := strings.Replace(string(y), tc.old, tc.new, 1)
			require.NotEqual(t, string(y), edited, "test edit %q did not apply", tc.old)
			_, err := Parse("config/pipeline.yaml", []byte(edited), "config/versions.env", v)
			require.Error(t, err)
			for _, s := range tc.want {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// TestCalibrationEmptyLists: each list must hold a row.
func TestCalibrationEmptyLists(t *testing.T) {
	y, v := readRepoConfig(t)
	s := string(y)
	cut := strings.Index(s, "\ncalibration:\n")
	require.Positive(t, cut)
	head := s[:cut+1]
	for _, tc := range []struct{ name, section, want string }{
		{"no search row", "  search: []\n  known: [\"a?\"]\n  general: [\"b\"]\n", "calibration.search: lists no search row"},
		{"no known question", "  search: [{question: \"q?\", subject: q}]\n  known: []\n  general: [\"b\"]\n", "calibration.known: lists no known question"},
		{"no general prompt", "  search: [{question: \"q?\", subject: q}]\n  known: [\"a?\"]\n  general: []\n", "calibration.general: lists no general prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := head + "calibration:\n  app_reply_tokens: 48\n  general_reply_tokens: 128\n  prompt_limit: 512\n" + tc.section
			_, err := Parse("config/pipeline.yaml", []byte(y), "config/versions.env", v)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
