package exporttest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// TestCards: every model ModelDir can write has a card naming a license the Hub accepts,
// so an export of it can be published.
func TestCards(t *testing.T) {
	for _, id := range snapshot.Models() {
		t.Run(id, func(t *testing.T) {
			b, ok := exporttest.Card(id)
			require.True(t, ok, "no card for %s", id)
			card, err := model.ParseCard(b)
			require.NoError(t, err)
			l, _ := card["license"].(string)
			name, _ := card["license_name"].(string)
			link, _ := card["license_link"].(string)
			assert.NotEmpty(t, l, "the card names no license")
			assert.NoError(t, hub.CheckLicense(l, name, link))
			if l == "other" {
				assert.NotEmpty(t, name, "license: other without license_name")
			}
		})
	}
	_, ok := exporttest.Card("nobody/no-model")
	assert.False(t, ok)
}
