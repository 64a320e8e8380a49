package workflow

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePins(t *testing.T) {
	sha := strings.Repeat("a1", 20)
	for _, tc := range []struct {
		name, text, says string
	}{
		{"short commit", "actions/checkout: {tag: v7, commit: 3d3c42e}", `pins.yaml: actions/checkout: commit "3d3c42e" is not a full 40-hex commit`},
		{"a tag, not a commit", "actions/checkout: {tag: v7, commit: v7.0.1}", `pins.yaml: actions/checkout: commit "v7.0.1" is not a full 40-hex commit`},
		{"no tag", "actions/checkout: {commit: " + sha + "}", "pins.yaml: actions/checkout: the tag the commit belongs to is missing"},
		{"unknown key", "actions/checkout: {tag: v7, commit: " + sha + ", ref: main}", "pins.yaml: line 1: unknown key ref (a pin has a tag and a commit)"},
		{"not a mapping", "actions/checkout: v7", "pins.yaml: line 1: each action maps to {tag: TAG, commit: COMMIT}"},
		{"not an action", "checkout: {tag: v7, commit: " + sha + "}", `pins.yaml: "checkout" is not an action name such as actions/checkout`},
		{"empty", "# nothing\n", "pins.yaml: the pin table is empty"},
		{"not YAML", "actions/checkout: [", "pins.yaml: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePins("pins.yaml", []byte(tc.text))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), "workflow.Pin", "a Go type name reached the message")
		})
	}
}

func TestUses(t *testing.T) {
	sha := strings.Repeat("a1", 20)
	pins, err := ParsePins("pins.yaml", []byte("actions/cache/restore: {tag: v6.1.0, commit: "+sha+"}\n"))
	require.NoError(t, err)
	got, err := pins.Uses("actions/cache/restore")
	require.NoError(t, err)
	assert.Equal(t, "actions/cache/restore@"+sha+" # v6.1.0", got)
	_, err = pins.Uses("actions/checkout")
	assert.EqualError(t, err, "action actions/checkout has no pin in workflows-src/pins.yaml (pinned: [actions/cache/restore])")
}
