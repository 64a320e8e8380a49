package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGateRows: the committed gate holds the reference's 12 search and 4 quiet rows, each
// search row naming its subject in the question, and the default prompt file is the
// neutral one.
func TestGateRows(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	require.Len(t, c.Gate.Search, 12)
	assert.Equal(t, []string{"What is the capital of Norway?", "What is 8 times 7?",
		"Who wrote Pride and Prejudice?", "What is the chemical symbol for iron?"}, c.Gate.Quiet)
	var subjects []string
	for _, r := range c.Gate.Search {
		assert.Contains(t, r.Question, r.Subject)
		subjects = append(subjects, r.Subject)
	}
	assert.Equal(t, []string{"Concord", "Providence", "Augusta", "Nassau", "Mercy", "Landfall", "Quicksand",
		"Nightfall", "Ostrava", "Gdynia", "Rijeka", "Linkoping"}, subjects)
	assert.Empty(t, c.Gate.PromptFile)
	assert.Equal(t, "fidelity-text.txt", c.Gate.FidelityText)
	assert.Equal(t, 2048, c.Gate.FidelityTokens)
	assert.Equal(t, 32, c.Gate.FidelityTopK)
	assert.Equal(t, 1024, c.Gate.FidelityDeepFrom)
}

func TestGateErrors(t *testing.T) {
	y, v := readRepoConfig(t)
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"trailer without subject", "names {subject}.", "names it.", []string{"gate.trailer", "{subject}"}},
		{"empty subject", "subject: Gdynia}", "subject: \"\"}", []string{"gate.search.9.subject: is empty"}},
		{"duplicate question", "Which country is Rijeka in?", "Which country is Gdynia in?", []string{"gate.search.10.question", "listed twice"}},
		{"quiet row repeated", "    - \"What is 8 times 7?\"", "    - \"What is the capital of Norway?\"", []string{"gate.quiet.1", "listed twice"}},
		{"unknown key", "  trailer:", "  trailor:", []string{"gate.trailor: unknown key"}},
		{"fidelity text in a folder", "  fidelity_text: fidelity-text.txt", "  fidelity_text: ../fidelity-text.txt", []string{"gate.fidelity_text", `"../fidelity-text.txt" is not the name of a .txt file in the config folder`}},
		{"no fidelity text", "  fidelity_text: fidelity-text.txt", "  fidelity_text: \"\"", []string{"gate.fidelity_text", `"" is not the name`}},
		{"too few fidelity tokens", "  fidelity_tokens: 2048", "  fidelity_tokens: 8", []string{"gate.fidelity_tokens: 8 is outside 16 to 8192"}},
		{"too many fidelity tokens", "  fidelity_tokens: 2048", "  fidelity_tokens: 8193", []string{"gate.fidelity_tokens: 8193 is outside 16 to 8192"}},
		{"more fidelity tokens than a window", "  fidelity_tokens: 2048", "  fidelity_tokens: 2049", []string{"gate.fidelity_tokens: 2049 is more than the 2048-token window can hold"}},
		{"deep from the last position", "  fidelity_deep_from: 1024", "  fidelity_deep_from: 2048", []string{"gate.fidelity_deep_from: 2048 is outside 1 to 2047"}},
		{"deep from nowhere", "  fidelity_deep_from: 1024", "  fidelity_deep_from: 0", []string{"gate.fidelity_deep_from: 0 is outside 1 to 2047"}},
		{"negative deep bound", "  max_deep_mean_kl: 0.05", "  max_deep_mean_kl: -0.1", []string{"gate.max_deep_mean_kl: -0.1 is negative"}},
		{"no top k", "  fidelity_top_k: 32", "  fidelity_top_k: 0", []string{"gate.fidelity_top_k: 0 is outside 1 to 256"}},
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

// TestFidelityTokensFitEveryWindow: the fidelity text is fed into every window's program, so
// no configured window may be shorter than it.
func TestFidelityTokensFitEveryWindow(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	c.Gate.FidelityTokens = 512
	c.Export.ContextTiers = append(c.Export.ContextTiers, 256)
	assert.ErrorContains(t, c.validate(nil), "gate.fidelity_tokens: 512 is more than the 256-token window can hold")
}
