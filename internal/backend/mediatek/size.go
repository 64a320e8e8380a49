package mediatek

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// MediaTek (examples/mediatek) sizing, docs/research/sizing.md#mediatek-export-memory. The
// gate keeps RunnerHeadroom of a runner's memory usable and DiskMarginBytes of its disk
// spare.
const (
	CalibrationOverhead   = 3.8
	WeightBytesPerParam   = 6
	StreamingCacheCopies  = 4
	StreamingWeightBytes  = 10
	LoweringBytesPerParam = 16
	RunnerHeadroom        = 0.85
	DiskMarginBytes       = 26 << 30
	// AlpacaPrompts is the number of non-empty lines of ExecuTorch's alpaca.txt.
	AlpacaPrompts = 9
	// ChunkOverheadW4/W8 are the bytes per layer parameter a chunk holds beyond the
	// weights themselves (scales, quantization parameters, graph): fitted to Qwen3-0.6B
	// A16W4 (86,052,736 B on MT6991 and 86,257,152 B on MT6989, 0.2816 and 0.2834: the
	// middle) and to Qwen3-4B's and SmolLM2-360M's A16W8 cards (0.2067-0.2080 fits both;
	// SmolLM2's chunks print 0.09 GB up to 4k and 0.10 GB from 8k, 95,000,000 B at
	// 0.20799). HeadOverhead is the same for the output head in the last chunk, as a
	// fraction of its weight bytes: Qwen3-0.6B's last chunk is 79,161,984 B over the
	// others for a 77,791,232-byte head at 4 bits (docs/research/sizing.md#mediatek-chunks).
	// A chunk holds nothing that grows with the window: the runner computes the RoPE
	// tables and the mask and passes them in with the caches (examples/mediatek's
	// --rot_emb_base, --rot_emb_type, --mask_type), and the cards agree (SmolLM2-360M's
	// last chunk is 0.14 GB from 2k to 16k, Qwen3-4B's chunks 1.10 GB at 2k and 4k).
	ChunkOverheadW4 = 0.2825
	ChunkOverheadW8 = 0.208
	HeadOverhead    = 0.0176
)

// SizeError is the size check's tolerance of a MediaTek chunk (see xnnpack.SizeError for
// what it catches): the worst measured error today is 0.12% (Qwen3-0.6B's A16W4 chunks),
// and internal/sizing's TestCheckBoundsCoverTheFiles holds it above that.
const SizeError = 0.15

// Files estimates the MediaTek chunk files and the fp32 embedding table the runner reads
// from disk.
type Files struct {
	Chunks         []int64 `json:"chunks"`
	EmbeddingBytes int64   `json:"embedding_bytes"`
}

// Total is every chunk plus the embedding table.
func (f Files) Total() int64 {
	return sizing.AddBytes(append([]int64{f.EmbeddingBytes}, f.Chunks...)...)
}

// PTEBytes estimates each chunk: an even share of the layers at the precision's weight
// width plus its overhead, the output head (with its own overhead) in the last chunk. No
// term grows with the window: the runner passes the RoPE tables, the mask and the caches in.
func PTEBytes(m sizing.Model, precision string, chunks int) (Files, error) {
	bits, overhead, err := weights(precision)
	if err != nil {
		return Files{}, err
	}
	a := m.Arch
	layerParams := float64(a.LinearParams()-a.Vocab*a.Dim) / float64(chunks)
	chunk := sizing.FloatBytes(layerParams * (bits/8 + overhead))
	f := Files{EmbeddingBytes: sizing.MulBytes(a.Vocab, a.Dim, sizing.FP32Bytes)}
	for i := 0; i < chunks; i++ {
		f.Chunks = append(f.Chunks, chunk)
	}
	f.Chunks[chunks-1] = sizing.AddBytes(f.Chunks[chunks-1], sizing.FloatBytes(float64(a.Vocab*a.Dim)*bits/8*(1+HeadOverhead)))
	return f, nil
}

func weights(precision string) (bits, overhead float64, err error) {
	switch precision {
	case "A16W4", "A8W4":
		return 4, ChunkOverheadW4, nil
	case "A16W8", "A8W8":
		return 8, ChunkOverheadW8, nil
	case "A16W16":
		return 16, ChunkOverheadW8, nil
	}
	return 0, 0, fmt.Errorf("no size model for MediaTek precision %q", precision)
}

// Need is the MediaTek export's memory and disk for one window.
type Need struct {
	// CalibrationBytes is the memory the calibration and lowering need.
	CalibrationBytes int64 `json:"calibration_bytes"`
	// DiskBytes is the calibration cache on disk (0 when streaming), without the margin.
	DiskBytes int64 `json:"disk_bytes"`
	Streaming bool  `json:"streaming"`
	Prompts   int   `json:"prompts"`
}

// KVBytesPerTokenAllLayers counts every layer, as the MediaTek scripts allocate a cache for
// each (Qwen3-0.6B: 229,376).
func KVBytesPerTokenAllLayers(m sizing.Model) int64 {
	a := m.Arch
	return sizing.MulBytes(a.Layers, 2, a.KVHeads, a.HeadDim, sizing.FP32Bytes)
}

// CalibrationNeed follows the reference implementation's calibration model
// (docs/research/sizing.md#mediatek-export-memory): without streaming, one prompt's
// 1 + response_cap steps of a window-long cache at 3.8× plus 6 B per parameter, and the
// cache of every prompt on disk; with streaming (LFM2), four cache copies plus attention
// scores, or the lowering's 16 B per parameter if larger, and nothing on disk.
func CalibrationNeed(m sizing.Model, window, responseCap, promptTokens, longSamples int, streaming bool) Need {
	kv := KVBytesPerTokenAllLayers(m)
	steps := int64(1 + responseCap)
	if !streaming {
		calib := sizing.AddBytes(sizing.FloatBytes(float64(sizing.MulBytes(steps, kv, int64(window)))*CalibrationOverhead), sizing.MulBytes(m.Params, WeightBytesPerParam))
		return Need{
			CalibrationBytes: calib,
			DiskBytes:        sizing.MulBytes(AlpacaPrompts, steps, kv, int64(window)),
			Prompts:          AlpacaPrompts,
		}
	}
	cache := sizing.MulBytes(kv, int64(window), StreamingCacheCopies)
	scores := sizing.MulBytes(3, m.Arch.Heads, int64(promptTokens), int64(window)+int64(promptTokens), sizing.FP32Bytes)
	calib := sizing.AddBytes(sizing.MulBytes(m.Params, StreamingWeightBytes), cache, scores)
	return Need{
		CalibrationBytes: max(calib, sizing.MulBytes(m.Params, LoweringBytesPerParam)),
		Streaming:        true,
		Prompts:          AlpacaPrompts + longSamples,
	}
}

func estimate(cfg *config.Config, src *model.Source, m sizing.Model, _ string, w int) (backend.Size, error) {
	mt := cfg.Export.MediaTek
	mp, err := family.MediaTekPlan(m.Family, src.Config, mt.MaxChunks)
	if err != nil {
		return backend.Size{}, err
	}
	z := backend.Size{KVBytesPerToken: m.NPUKVCacheBytes(1), KVCacheBytes: m.NPUKVCacheBytes(w)}
	files, err := PTEBytes(m, mt.Precision, mp.Chunks)
	z.Chunks, z.EmbeddingBytes, z.PTEBytes = files.Chunks, files.EmbeddingBytes, files.Total()
	need := CalibrationNeed(m, w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, mp.Streaming)
	z.HostNeedBytes, z.DiskNeedBytes = need.CalibrationBytes, need.DiskBytes
	if err == nil && w < mt.PromptTokens {
		err = fmt.Errorf("window %d is below the %d-token prompt graph", w, mt.PromptTokens)
	}
	return z, err
}
