package family_test

import (
	"encoding/json"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLFM2ConvKernel: export_llm builds LFM2's short convolution with a kernel of 3, so a
// config asking for another length is refused with the reason; an absent key is
// transformers' default, 3.
func TestLFM2ConvKernel(t *testing.T) {
	tests := []struct {
		name   string
		spoil  func(text map[string]any)
		refuse string
	}{
		{name: "as published", spoil: func(map[string]any) {}},
		{name: "absent", spoil: func(m map[string]any) { delete(m, "conv_L_cache") }},
		{name: "written as a decimal", spoil: func(m map[string]any) { m["conv_L_cache"] = json.Number("3.0") }},
		{name: "longer kernel", spoil: func(m map[string]any) { m["conv_L_cache"] = json.Number("4") },
			refuse: "conv_L_cache is 4, and export_llm builds LFM2's short convolution with a kernel of 3"},
		{name: "shorter kernel", spoil: func(m map[string]any) { m["conv_L_cache"] = json.Number("2") },
			refuse: "conv_L_cache is 2, and export_llm builds LFM2's short convolution with a kernel of 3"},
		{name: "impossible kernel", spoil: func(m map[string]any) { m["conv_L_cache"] = json.Number("0") },
			refuse: "LiquidAI/LFM2.5-1.2B-Base/config.json: conv_L_cache is 0, not a whole number in 1..1024"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := snap(t, "LiquidAI/LFM2.5-1.2B-Base")
			src.Config.Edit(tc.spoil)
			p, err := family.XNNPACKPlan(family.ByKey("lfm2"), src.Config)
			if tc.refuse != "" {
				require.Error(t, err)
				assert.Equal(t, tc.refuse, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "lfm2", p.Converter)
		})
	}
}
