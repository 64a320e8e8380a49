package watch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClipKeepsWholeCharacters(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc"},
		{"ab\u00e9cd", 3, "ab"}, // é is two bytes: cutting at 3 would split it
		{"ab\u00e9cd", 4, "ab\u00e9"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, clip(tc.in, tc.n), "clip(%q, %d)", tc.in, tc.n)
	}
}
