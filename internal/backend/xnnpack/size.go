package xnnpack

import (
	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// The XNNPACK file and export, docs/research/sizing.md#constants. Linear8da4w is a 4-bit
// weight plus a bf16 scale per group of 32.
//
// The file has no proportional overhead once three costs the per-parameter terms leave out
// are counted, measured on the real export_llm files of the tiny models (e2e/realtool,
// docs/research/realtool.md): the int8 embedding's fp32 scale per row
// (sizing.EmbeddingScaleBytes); each decoder layer's share of the program (instructions,
// values) and of the XNNPACK delegate blobs (graph metadata: Qwen3's 2 layers carry a
// 27,496-byte program and 28 blobs of 28,080 bytes, 13 blobs a layer); and a few KB of
// header, metadata methods and alignment. SmolLM2-135M (30 layers) and -360M (32) leave
// 26,176 B a layer and 31 KB a file over their per-parameter bytes, which 27,000 B a layer
// matches within 0.004% of either file; the fixed 2,700 B puts the five 2-layer real files,
// which leave 54,144 (Qwen2.5) to 59,264 (Qwen3) bytes over theirs, in the middle of that
// spread: every one within 0.4%, every measured full-size file within 0.04%
// (docs/research/sizing.md#xnnpack-files). HostPeakHeadroom is the export's headroom over
// its raw peak.
//
// A gated DeltaNet layer (Qwen3.5) carries more program and delegate graph than an
// attention layer: PTEGraphBytesPerDeltaNetLayer is its share in place of the 27,000, and
// a model with DeltaNet layers adds PTEDeltaNetFixedBytes once. Both come from three real
// tiny Qwen3.5 files of 2, 4 and 8 layers (1, 3 and 6 of them DeltaNet), whose bytes over
// the other terms they fit exactly; every file is within 0.02% of the estimate with them
// (internal/sizing's TestAccuracy rows), and 5.1% to 8.5% over it without
// (docs/research/new-families.md, "Qwen3.5 on the real toolchain").
const (
	Linear8da4w                   = 0.5 + 2.0/32
	PTEGraphBytesPerLayer         = 27_000
	PTEGraphBytesPerDeltaNetLayer = 34_400
	PTEDeltaNetFixedBytes         = 7_200
	PTEFixedBytes                 = 2_700
	HostPeakHeadroom              = 1.7
)

// SizeError is the size check's tolerance of an XNNPACK file: one further off its estimate
// than this was not built as sized (linears left unquantized, ExecuTorch issue 22044, make
// an 8da4w file several times larger). It was the worst error of the .pte estimate against
// every measured file and card, rounded up to a whole percent, before the fits of issue 26
// (docs/research/checks.md); the worst measured error today is 0.39% (the tiny Qwen3 and
// Qwen2.5 files), and internal/sizing's TestCheckBoundsCoverTheFiles holds it above that.
const SizeError = 0.02

// linearBytes is the bytes per linear parameter of each qmode in the file. Its keys are
// config.QModes, the one list of known qmodes (TestSizeModelPerQMode holds them to it).
var linearBytes = map[string]float64{"8da4w": Linear8da4w, "fp32": sizing.LinearFP32}

// LinearBytesPerParam is the size model of a qmode.
func LinearBytesPerParam(qmode string) (float64, error) { return sizing.PerParam(linearBytes, qmode) }

// PTEBytes estimates the export_llm XNNPACK file: int8 embedding with its scales,
// linears by qmode, the DeltaNet weights the export leaves fp32 (Qwen3.5's convolutions,
// gates and norms; none for other models), RoPE tables for the window over the rotated
// dimensions, each layer's program and delegate graph, and the file's fixed part.
// optimum-executorch's files (Gemma 3, SmolLM3) are sized by the same per-parameter terms
// less the RoPE tables, with their own graph share (optimumGraph).
func PTEBytes(m sizing.Model, qmode string, window int) (int64, error) {
	bpl, err := LinearBytesPerParam(qmode)
	if err != nil {
		return 0, err
	}
	a := m.Arch
	raw := float64(a.EmbeddingParams())*sizing.EmbeddingInt8 + float64(a.LinearParams())*bpl +
		float64(a.DeltaNetExtraParams())*sizing.LinearFP32 + float64(window)*float64(m.RotaryDim())*m.RopeBytes()
	return sizing.AddBytes(sizing.FloatBytes(raw), sizing.MulBytes(a.Vocab, sizing.EmbeddingScaleBytes),
		graphBytes(m), PTEFixedBytes), nil
}

// optimumGraph is the program and delegate graph of optimum-executorch's files, per family:
// bytes a full-attention layer, a sliding-window layer, and once a file (PTEFixedBytes's
// part included). Their graphs are transformers' modules traced whole, not export_llm's, and
// differ from it and from each other: Gemma 3's four norms a layer, its ring caches' masks
// and two RoPEs, SmolLM3's lean layers. Fitted exactly on real tiny files of 2 and 4 layers
// (Gemma 3: sliding+full, 3 sliding+full, sliding+3 full; SmolLM3: 2 and 4), each within
// 0.03% with them; the 2-layer files were 19.5% over (Gemma 3) and 8.2% under (SmolLM3)
// export_llm's terms
// (docs/research/new-families.md, "Gemma 3 and SmolLM3 on the real toolchain").
var optimumGraph = map[string]struct{ Layer, Sliding, Fixed int64 }{
	"gemma3":  {Layer: 23_750, Sliding: 27_500, Fixed: 32_300},
	"smollm3": {Layer: 17_100, Fixed: 11_250},
}

// graphBytes is the layers' share of the program and delegate graphs, with the DeltaNet
// layers' larger one and its fixed part, and optimum-executorch's own per family.
func graphBytes(m sizing.Model) int64 {
	a := m.Arch
	if m.Family != nil {
		if g, ok := optimumGraph[m.Family.Key]; ok && m.Family.Route.Tool == family.RouteOptimum {
			s := a.SlidingLayers()
			return sizing.AddBytes(sizing.MulBytes(a.Layers-s, g.Layer), sizing.MulBytes(s, g.Sliding), g.Fixed-PTEFixedBytes)
		}
	}
	d := a.DeltaNetLayers()
	g := sizing.AddBytes(sizing.MulBytes(a.Layers-d, PTEGraphBytesPerLayer), sizing.MulBytes(d, PTEGraphBytesPerDeltaNetLayer))
	if d > 0 {
		g = sizing.AddBytes(g, PTEDeltaNetFixedBytes)
	}
	return g
}

// HostNeed is the larger of 1.7 × the export peak and the lowering's need with its mask
// copies (Vulkan's need).
func HostNeed(m sizing.Model, window int) int64 {
	return max(sizing.FloatBytes(float64(m.ExportPeakBytes(window))*HostPeakHeadroom), exportllm.LoweringNeed(m, window))
}
