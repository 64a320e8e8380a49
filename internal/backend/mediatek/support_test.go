package mediatek_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	_ "github.com/experimentalmachines/exe-expo/internal/backend/all"
	"github.com/experimentalmachines/exe-expo/internal/backend/mediatek"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMediaTekLFM2NeedsTheOverlay: ExecuTorch 1.4.0 ships no lfm2.py, so MediaTek takes
// LFM2 only because internal/mtkoverlay adds it (its own test applies and runs it), and only
// where the overlay's model builds the config: a conv_L_cache other than 3 is refused.
func TestMediaTekLFM2NeedsTheOverlay(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	mp, err := family.MediaTekPlan(family.ByKey("lfm2"), mustLoad(t, "LiquidAI/LFM2-1.2B").Config, cfg.Export.MediaTek.MaxChunks)
	require.NoError(t, err)
	require.False(t, mtkoverlay.Stock(mp.Script), "v1.4.0 has no %s", mp.Script)
	require.Contains(t, mtkoverlay.Families(), "lfm2")

	tests := []struct {
		name    string
		kernel  any // conv_L_cache; nil leaves the config as published
		refusal string
	}{
		{name: "as published"},
		{name: "another kernel", kernel: json.Number("4"),
			refusal: "conv_L_cache is 4, and the MediaTek lfm2 model builds its short convolution with a kernel of 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := mustLoad(t, "LiquidAI/LFM2-1.2B")
			if tc.kernel != nil {
				src.Config.Edit(func(text map[string]any) { text["conv_L_cache"] = tc.kernel })
			}
			assert.Equal(t, tc.refusal, mediatek.Backend.Support(cfg, src, family.ByKey("lfm2")))
			v := backend.Evaluate(cfg, src).Backend("mediatek")
			assert.Equal(t, tc.refusal == "", v.OK)
			assert.Equal(t, tc.refusal, v.Reason)
		})
	}
}

func mustLoad(t *testing.T, id string) *model.Source {
	t.Helper()
	src, err := snapshot.Load(context.Background(), id)
	require.NoError(t, err)
	return src
}
