package sizing

// MTKNeed is the MediaTek export's memory and disk for one window.
type MTKNeed struct {
	// CalibrationBytes is the memory the calibration and lowering need.
	CalibrationBytes int64 `json:"calibration_bytes"`
	// DiskBytes is the calibration cache on disk (0 when streaming), without the margin.
	DiskBytes int64 `json:"disk_bytes"`
	Streaming bool  `json:"streaming"`
	Prompts   int   `json:"prompts"`
}

// KVBytesPerTokenAllLayers counts every layer, as the MediaTek scripts allocate a cache for
// each (Qwen3-0.6B: 229,376).
func (m Model) KVBytesPerTokenAllLayers() int64 {
	a := m.Arch
	return mul(a.Layers, 2, a.KVHeads, a.HeadDim, FP32Bytes)
}

// MediaTekNeed follows the reference implementation's calibration model
// (docs/research/sizing.md#mediatek-export-memory): without streaming, one prompt's
// 1 + response_cap steps of a window-long cache at 3.8× plus 6 B per parameter, and the
// cache of every prompt on disk; with streaming (LFM2), four cache copies plus attention
// scores, or the lowering's 16 B per parameter if larger, and nothing on disk.
func (m Model) MediaTekNeed(window, responseCap, promptTokens, longSamples int, streaming bool) MTKNeed {
	kv := m.KVBytesPerTokenAllLayers()
	steps := int64(1 + responseCap)
	if !streaming {
		calib := add(fromFloat(float64(mul(steps, kv, int64(window)))*MTKCalibrationOverhead), mul(m.Params, MTKWeightBytesPerParam))
		return MTKNeed{
			CalibrationBytes: calib,
			DiskBytes:        mul(MTKAlpacaPrompts, steps, kv, int64(window)),
			Prompts:          MTKAlpacaPrompts,
		}
	}
	cache := mul(kv, int64(window), MTKStreamingCacheCopies)
	scores := mul(3, m.Arch.Heads, int64(promptTokens), int64(window)+int64(promptTokens), FP32Bytes)
	calib := add(mul(m.Params, MTKStreamingWeightBytes), cache, scores)
	return MTKNeed{
		CalibrationBytes: max(calib, mul(m.Params, MTKLoweringBytesPerParam)),
		Streaming:        true,
		Prompts:          MTKAlpacaPrompts + longSamples,
	}
}
