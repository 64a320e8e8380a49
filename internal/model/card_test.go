package model_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// TestParseCard: a model card's metadata is its YAML front matter, read as the Hub reads
// it; a card without one has none, and front matter that is not YAML is an error.
func TestParseCard(t *testing.T) {
	cases := []struct {
		name, card string
		want       map[string]any
		err        string
	}{
		{"license id", "---\nlicense: apache-2.0\npipeline_tag: text-generation\n---\n# Qwen3\n", map[string]any{"license": "apache-2.0", "pipeline_tag": "text-generation"}, ""},
		{"other, by name and link", "---\nlicense: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n---\n",
			map[string]any{"license": "other", "license_name": "lfm1.0", "license_link": "LICENSE"}, ""},
		{"CRLF and a blank line first", "\r\n---\r\nlicense: llama3.2\r\n---\r\ntext", map[string]any{"license": "llama3.2"}, ""},
		{"front matter ends the file", "---\nlicense: mit\n---", map[string]any{"license": "mit"}, ""},
		{"no front matter", "# A model\n\nlicense: mit\n", nil, ""},
		{"unclosed front matter", "---\nlicense: mit\n", nil, ""},
		{"empty front matter", "---\n\n---\n", nil, ""},
		{"empty card", "", nil, ""},
		{"not YAML", "---\nlicense: [mit\n---\n", nil, "the YAML front matter is not a mapping"},
		{"a list, not a mapping", "---\n- license\n---\n", nil, "the YAML front matter is not a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := model.ParseCard([]byte(tc.card))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
