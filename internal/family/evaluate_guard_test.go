package family_test

import (
	"encoding/json"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEligibleNeedsABackend takes a model with no model-wide refusal and refuses it every
// backend: Qwen3-4B has no Qualcomm registry entry, and YaRN rope scaling is refused by
// the XNNPACK, Vulkan and MediaTek recipes. Nothing to export means not eligible.
func TestEligibleNeedsABackend(t *testing.T) {
	c := cfg(t)
	src := load(t, "Qwen/Qwen3-4B")
	before := backend.Evaluate(c, src)
	require.True(t, before.Eligible, "precondition: Qwen3-4B is eligible as published; reasons %q", before.Reasons)

	src.Config.Edit(func(text map[string]any) {
		text["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": json.Number("4.0")}
	})
	v := backend.Evaluate(c, src)
	require.Empty(t, v.Reasons, "YaRN is a per-backend refusal, not a model-wide one")
	require.Empty(t, v.Supported(), "every backend refuses it: %+v", v.Backends)
	assert.False(t, v.Eligible, "eligible with no backend to export to")
}
