package hub

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestURLsEscapeEverySegment: even a name that slipped past the checks stays inside its
// segments: no '?', '#' or '%' of a name reaches a URL as itself, and only the repo id's
// own slash separates segments.
func TestURLsEscapeEverySegment(t *testing.T) {
	c := New(Options{Endpoint: "https://hub.example", NoEnvToken: true})
	tests := []struct{ name, got, want string }{
		{"model API", c.modelURL("a?b/c#d", "commit", "x/y"), "https://hub.example/api/models/a%3Fb/c%23d/commit/x%2Fy"},
		{"model API, no segment", c.modelURL("a%2fb/c"), "https://hub.example/api/models/a%252fb/c"},
		{"API", c.apiURL("repos", "a?b"), "https://hub.example/api/repos/a%3Fb"},
		{"resolve", c.resolveURL("o?x/m", "r?1", "d/f?.json"), "https://hub.example/o%3Fx/m/resolve/r%3F1/d/f%3F.json"},
		{"repo page", c.repoPage("o/m#x"), "https://hub.example/o/m%23x"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.got, tc.name)
	}
}
