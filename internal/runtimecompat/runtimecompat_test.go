package runtimecompat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarning holds the rule at each of its edges: patch, minor and major, on both sides
// of the file's release.
func TestWarning(t *testing.T) {
	tests := []struct {
		built, app string
		warns      string // "" when the file loads quietly
	}{
		{"1.5.1", "1.5.1", ""},
		{"1.5.1", "1.5.2", ""},
		{"1.5.1", "1.6.0", ""},
		{"1.5.1", "1.6.9", ""},
		{"1.5.1", "1.7.0", "more than one minor release older than the runtime's 1.7.0"},
		{"1.5.1", "1.5.0", "newer than the runtime's 1.5.0"},
		{"1.5.1", "1.4.9", "newer than the runtime's 1.4.9"},
		{"1.5.1", "2.0.0", "another major release than the runtime's 2.0.0"},
		{"1.4.0", "1.5.1", ""},
		{"1.4.0", "1.6.0", "more than one minor release older"},
		{"1.9.0", "1.10", ""},
	}
	for _, tc := range tests {
		t.Run(tc.built+" on "+tc.app, func(t *testing.T) {
			got, err := Warning(tc.built, tc.app)
			require.NoError(t, err)
			if tc.warns == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.warns)
			assert.Contains(t, got, "made with ExecuTorch "+tc.built)
		})
	}
}

// TestLoadsOnAgreesWithWarning: every runtime inside the range loads quietly and every one
// outside it warns, over a grid of releases around the file's.
func TestLoadsOnAgreesWithWarning(t *testing.T) {
	for _, built := range []string{"1.4.0", "1.5.1", "2.0.3", "0.7.0"} {
		r, err := LoadsOn(built)
		require.NoError(t, err)
		from, _ := Parse(r.From)
		before, _ := Parse(r.Before)
		for major := 0; major <= 3; major++ {
			for minor := 0; minor <= 9; minor++ {
				for patch := 0; patch <= 3; patch++ {
					app := Version{major, minor, patch}
					inside := !app.less(from) && app.less(before)
					w, err := Warning(built, app.String())
					require.NoError(t, err)
					assert.Equal(t, inside, w == "", "%s on %s: %q", built, app, w)
				}
			}
		}
	}
}

func TestRange(t *testing.T) {
	r, err := LoadsOn("1.5.1")
	require.NoError(t, err)
	assert.Equal(t, Range{From: "1.5.1", Before: "1.7.0"}, r)
	assert.Equal(t, "1.5.1 to 1.6.x", r.String())
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", "1", "1.5.1.2", "1.5.1+cpu", "1.6.0rc1", "v1.5.1", "1.05.1", "-1.5.1", "1.x"} {
		_, err := Parse(s)
		assert.ErrorContains(t, err, "is not MAJOR.MINOR.PATCH", s)
	}
	_, err := LoadsOn("latest")
	assert.Error(t, err)
	_, err = Warning("1.5.1", "nightly")
	assert.Error(t, err)
}
