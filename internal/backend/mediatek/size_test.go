package mediatek_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/mediatek"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/internal/sizing/sizingtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkedNumbers holds the MediaTek size model to worked figures.
func TestWorkedNumbers(t *testing.T) {
	q06 := sizingtest.Sized(t, "Qwen/Qwen3-0.6B")
	files, err := mediatek.PTEBytes(q06, "A16W4", 4)
	require.NoError(t, err)
	assert.Equal(t, int64(622_329_856), files.EmbeddingBytes, "Qwen3-0.6B MediaTek embedding")
	assert.Equal(t, int64(float64(10*229_376*512)*3.8)+751_632_384*6, mediatek.CalibrationNeed(q06, 512, 9, 128, 14, false).CalibrationBytes,
		"Qwen3-0.6B MediaTek calibration at 512")
	// LFM2.5 calibrates one prompt at a time: no disk, and it grows little with the window.
	lfm := sizingtest.Sized(t, "LiquidAI/LFM2.5-1.2B-Base")
	n512, n32k := mediatek.CalibrationNeed(lfm, 512, 9, 128, 14, true), mediatek.CalibrationNeed(lfm, 32768, 9, 128, 14, true)
	if n32k.DiskBytes != 0 || float64(n32k.CalibrationBytes) > 1.2*float64(n512.CalibrationBytes) || n32k.Prompts != 23 {
		t.Errorf("streaming needs %+v → %+v", n512, n32k)
	}
	// the same model without streaming would cache 9 prompts × 10 steps × the full cache
	got := mediatek.CalibrationNeed(lfm, 32768, 9, 128, 14, false).DiskBytes
	assert.Equal(t, 9*10*mediatek.KVBytesPerTokenAllLayers(lfm)*32768, got, "non-streaming disk")
	_, err = mediatek.PTEBytes(q06, "A4W4", 4)
	assert.EqualError(t, err, `no size model for MediaTek precision "A4W4"`)
}

// TestBoundsKeepSizesInRange: at internal/model's bounds nothing MediaTek sizes wraps or
// saturates, with the default config's settings (internal/sizing's test of the same name holds
// the shared sizes).
func TestBoundsKeepSizesInRange(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	mt := cfg.Export.MediaTek
	for _, m := range sizingtest.AtBounds(t) {
		files, err := mediatek.PTEBytes(m, "A16W16", 1)
		require.NoError(t, err)
		sizingtest.InRange(t, files.Total(), "files, %d parameters", m.Params)
		for _, w := range sizingtest.BoundWindows {
			need := mediatek.CalibrationNeed(m, w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, false)
			stream := mediatek.CalibrationNeed(m, w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, true)
			sizingtest.InRange(t, need.CalibrationBytes, "calibration at %d tokens, %d parameters", w, m.Params)
			sizingtest.InRange(t, need.DiskBytes, "disk at %d tokens, %d parameters", w, m.Params)
			sizingtest.InRange(t, stream.CalibrationBytes, "streaming at %d tokens, %d parameters", w, m.Params)
		}
	}
}

// TestSizesSaturate: settings no pipeline.yaml should have (a response cap of 2^40 tokens)
// give the largest size rather than a wrapped, negative one.
func TestSizesSaturate(t *testing.T) {
	m := sizingtest.Sized(t, "Qwen/Qwen3-1.7B")
	assert.Equal(t, int64(sizing.MaxBytes), mediatek.CalibrationNeed(m, 32768, 1<<40, 128, 14, false).CalibrationBytes)
	assert.Equal(t, int64(sizing.MaxBytes), mediatek.CalibrationNeed(m, 32768, 1<<40, 128, 14, false).DiskBytes)
	assert.Equal(t, int64(sizing.MaxBytes), mediatek.CalibrationNeed(m, 1<<40, 9, 1<<40, 14, true).CalibrationBytes)
}
