package vulkan

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// TestSizeModelPerQMode holds the size model to config.QModes, the one list of known
// qmodes: every qmode pipeline.yaml and export accept has a size, and sizing knows no qmode
// the others would refuse.
func TestSizeModelPerQMode(t *testing.T) {
	assert.ElementsMatch(t, config.QModes(), slices.Collect(maps.Keys(linearBytes)))
	var m sizing.Model
	m.Arch.Layers, m.Arch.KVHeads, m.Arch.HeadDim = 2, 2, 64
	for _, q := range config.QModes() {
		_, err := PTEBytes(m, q, 2048)
		assert.NoError(t, err, q)
	}
	for _, q := range []string{"int8", "", "FP32"} {
		_, err := PTEBytes(m, q, 2048)
		assert.EqualError(t, err, `no size model for qmode "`+q+`"`)
	}
}
