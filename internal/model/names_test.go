package model_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// TestValidIDHubRules holds ValidID to the Hub's repo id rules
// (docs/research/hub.md#names-checked-before-any-request), one rule per bad case.
func TestValidIDHubRules(t *testing.T) {
	long := strings.Repeat("a", 96)
	tests := []struct {
		id   string
		want bool
		why  string
	}{
		{"Qwen/Qwen3-1.7B", true, "a real id"},
		{"HuggingFaceTB/SmolLM2-360M-Instruct", true, "a real id"},
		{"a/b", true, "one character a part"},
		{"a_b/c_", true, "'_' may end a part"},
		{long + "/" + long, true, "96 characters a part"},
		{"org/model.gitx", true, "only a final .git is refused"},
		{"", false, "empty"},
		{"a/", false, "empty name"},
		{"/b", false, "empty namespace"},
		{"ab", false, "no namespace"},
		{"../X", false, "a path climbing out"},
		{"a/..", false, "a dot-dot name"},
		{"a/b?c", false, "'?' would start a query"},
		{"a/b#c", false, "'#' would start a fragment"},
		{"a%2fb/c", false, "'%' would be unescaped into a slash"},
		{"a/b/c", false, "two slashes"},
		{"a/b c", false, "a space"},
		{"-a/b", false, "a leading '-'"},
		{".a/b", false, "a leading '.'"},
		{"a/-b", false, "a name starting with '-'"},
		{"a-/b", false, "a namespace ending in '-'"},
		{"a./b", false, "a namespace ending in '.'"},
		{"a/b.", false, "a name ending in '.'"},
		{"a/b-", false, "a name ending in '-'"},
		{"a/b--c", false, "'--'"},
		{"a--b/c", false, "'--' in the namespace"},
		{"a/b..c", false, "'..'"},
		{"a/b.git", false, "a name ending in .git"},
		{long + "a/b", false, "a namespace of 97 characters"},
		{"a/" + long + "a", false, "a name of 97 characters"},
		{"a/ü", false, "non-ASCII"},
		{"a/b\n", false, "a trailing newline"},
		{"a/b\x00", false, "a NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			assert.Equal(t, tc.want, model.ValidID(tc.id), "%q", tc.id)
		})
	}
}

func TestCheckIDNamesFieldAndValue(t *testing.T) {
	require.NoError(t, model.CheckID("--repo", "org/m"))
	err := model.CheckID("--repo", "../X")
	require.Error(t, err)
	assert.Equal(t, `--repo "../X" is not a Hub repo id (`+model.IDRule+`)`, err.Error())
}
