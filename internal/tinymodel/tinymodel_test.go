package tinymodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/tinymodel"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// TestCards: every tiny model's card names its real model's license in front matter the
// Hub accepts, so an export of it can be published.
func TestCards(t *testing.T) {
	want := map[string][3]string{ // license, license_name, license_link
		"qwen3":    {"apache-2.0", "", "https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/LICENSE"},
		"qwen2.5":  {"apache-2.0", "", "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/blob/main/LICENSE"},
		"llama3.2": {"llama3.2", "", ""},
		"smollm2":  {"apache-2.0", "", ""},
		"lfm2.5":   {"other", "lfm1.0", "LICENSE"},
		"phi4mini": {"mit", "", "https://huggingface.co/microsoft/Phi-4-mini-instruct/resolve/main/LICENSE"},
		"qwen3.5":  {"apache-2.0", "", "https://huggingface.co/Qwen/Qwen3.5-0.8B/blob/main/LICENSE"},
		"gemma3":   {"gemma", "", ""},
		"smollm3":  {"apache-2.0", "", ""},
	}
	require.Len(t, tinymodel.Families, len(want))
	for _, f := range tinymodel.Families {
		t.Run(f.Name, func(t *testing.T) {
			card, err := model.ParseCard(f.Card())
			require.NoError(t, err)
			var got [3]string
			for i, k := range []string{"license", "license_name", "license_link"} {
				got[i], _ = card[k].(string)
			}
			assert.Equal(t, want[f.Name], got)
			assert.NoError(t, hub.CheckLicense(got[0], got[1], got[2]))
		})
	}
}
