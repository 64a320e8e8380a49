package sizing

import (
	"fmt"
	"math"

	"github.com/experimentalmachines/exe-expo/pkg/model"
)

// Model is what sizing needs to know about one source model.
type Model struct {
	Arch model.Arch
	// HFRope is true when the exported model keeps Hugging Face's rotate-half RoPE tables.
	HFRope bool
	// Params is the checkpoint's real parameter count (safetensors total).
	Params int64
}

// KVBytesPerToken is the fp32 KV cache per token: attending layers × 2 (K and V) ×
// kv heads × head_dim × 4 bytes. Qwen3-4B: 294,912.
func (m Model) KVBytesPerToken() int64 {
	a := m.Arch
	return mul(a.AttentionLayers(), 2, a.KVHeads, a.HeadDim, FP32Bytes)
}

// KVCacheBytes is the whole window's fp32 cache, allocated in full at load.
func (m Model) KVCacheBytes(window int) int64 { return mul(m.KVBytesPerToken(), int64(window)) }

// MaskBytes is the causal masks the eager model holds during export: one bool byte per
// cell, one mask per attention layer. It grows with the square of the window.
func (m Model) MaskBytes(window int) int64 {
	return mul(m.Arch.AttentionLayers(), int64(window), int64(window))
}

// linearBytes and vulkanLinearBytes are the bytes per linear parameter of each qmode in
// the XNNPACK and Vulkan files. Their keys are config.QModes, the one list of known
// qmodes (TestSizeModelPerQMode holds them to it).
var (
	linearBytes       = map[string]float64{"8da4w": Linear8da4w, "fp32": LinearFP32}
	vulkanLinearBytes = map[string]float64{"8da4w": VulkanLinear8da4w, "fp32": LinearFP32}
)

// LinearBytesPerParam is the size model of a qmode.
func LinearBytesPerParam(qmode string) (float64, error) { return perParam(linearBytes, qmode) }

func perParam(table map[string]float64, qmode string) (float64, error) {
	b, ok := table[qmode]
	if !ok {
		return 0, fmt.Errorf("no size model for qmode %q", qmode)
	}
	return b, nil
}

func (m Model) ropeBytes() float64 {
	if m.HFRope {
		return RopeBytesHF
	}
	return RopeBytesMeta
}

// PTEBytesXNNPACK estimates the export_llm XNNPACK file: int8 embedding with its scales,
// linears by qmode, RoPE tables for the window, each layer's program and delegate graph,
// and the file's fixed part.
func (m Model) PTEBytesXNNPACK(qmode string, window int) (int64, error) {
	bpl, err := LinearBytesPerParam(qmode)
	if err != nil {
		return 0, err
	}
	a := m.Arch
	raw := float64(a.EmbeddingParams())*EmbeddingInt8 + float64(a.LinearParams())*bpl +
		float64(window)*float64(a.HeadDim)*m.ropeBytes()
	return add(fromFloat(raw), mul(a.Vocab, EmbeddingScaleBytes), mul(a.Layers, PTEGraphBytesPerLayer), PTEFixedBytes), nil
}

// PTEBytesVulkan estimates the Vulkan delegate's file: the int8 embedding with its scales,
// linears with fp32 scales and zeros per group, the RoPE tables and the window term, and
// the delegate's fixed part.
func (m Model) PTEBytesVulkan(qmode string, window int) (int64, error) {
	bpl, err := perParam(vulkanLinearBytes, qmode)
	if err != nil {
		return 0, err
	}
	a := m.Arch
	perToken := float64(a.HeadDim)*m.ropeBytes() + float64(a.AttentionLayers()*a.HeadDim)*VulkanWindowPerLayerDim
	raw := float64(a.EmbeddingParams())*EmbeddingInt8 + float64(a.LinearParams())*bpl + float64(window)*perToken
	return add(fromFloat(raw), mul(a.Vocab, EmbeddingScaleBytes), VulkanFixedBytes), nil
}

// PTEBytesQNN estimates the hybrid QNN decoder file.
func (m Model) PTEBytesQNN(window int) int64 {
	a := m.Arch
	return add(fromFloat(float64(m.Params)*QNNBytesPerParam), mul(int64(window), a.Layers, a.HeadDim, QNNWindowPerLayerDim))
}

// NPUKVCacheBytes is the 16-bit KV cache the NPU runners allocate for every layer.
func (m Model) NPUKVCacheBytes(window int) int64 {
	a := m.Arch
	return mul(a.AttentionLayers(), 2, a.KVHeads, a.HeadDim, NPUKVBytesPerElement, int64(window))
}

// MTKFiles estimates the MediaTek chunk files and the fp32 embedding table the runner
// reads from disk.
type MTKFiles struct {
	Chunks         []int64 `json:"chunks"`
	EmbeddingBytes int64   `json:"embedding_bytes"`
}

// Total is every chunk plus the embedding table.
func (f MTKFiles) Total() int64 {
	return add(append([]int64{f.EmbeddingBytes}, f.Chunks...)...)
}

// PTEBytesMediaTek estimates each chunk: an even share of the layers at the precision's
// weight width plus its overhead, the output head (with its own overhead) in the last
// chunk. No term grows with the window: the runner passes the RoPE tables, the mask and
// the caches in.
func (m Model) PTEBytesMediaTek(precision string, chunks, window int) (MTKFiles, error) {
	bits, overhead, err := mtkWeights(precision)
	if err != nil {
		return MTKFiles{}, err
	}
	a := m.Arch
	layerParams := float64(a.LinearParams()-a.Vocab*a.Dim) / float64(chunks)
	chunk := fromFloat(layerParams * (bits/8 + overhead))
	f := MTKFiles{EmbeddingBytes: mul(a.Vocab, a.Dim, FP32Bytes)}
	for i := 0; i < chunks; i++ {
		f.Chunks = append(f.Chunks, chunk)
	}
	f.Chunks[chunks-1] = add(f.Chunks[chunks-1], fromFloat(float64(a.Vocab*a.Dim)*bits/8*(1+MTKHeadOverhead)))
	return f, nil
}

func mtkWeights(precision string) (bits, overhead float64, err error) {
	switch precision {
	case "A16W4", "A8W4":
		return 4, MTKChunkOverheadW4, nil
	case "A16W8", "A8W8":
		return 8, MTKChunkOverheadW8, nil
	case "A16W16":
		return 16, MTKChunkOverheadW8, nil
	}
	return 0, 0, fmt.Errorf("no size model for MediaTek precision %q", precision)
}

// ExportPeakBytes is the raw export peak: fp32 weights, the KV cache, the causal masks and
// a fixed 2.5 GB for Python, torch and the lowering.
func (m Model) ExportPeakBytes(window int) int64 {
	a := m.Arch
	w := float64(a.EmbeddingParams()+a.LinearParams()) * FP32Bytes * ExportPeakWeights
	return add(fromFloat(w), m.KVCacheBytes(window), m.MaskBytes(window), ExportFixedBytes)
}

// HostNeedVulkan adds the extra mask copies the Vulkan partitioner makes, with a margin.
func (m Model) HostNeedVulkan(window int) int64 {
	peak := float64(m.ExportPeakBytes(window))
	return fromFloat((peak + (VulkanMaskCopies-1)*float64(m.MaskBytes(window))) * VulkanNeedMargin)
}

// HostNeedXNNPACK is the larger of 1.7 × the export peak and the Vulkan need.
func (m Model) HostNeedXNNPACK(window int) int64 {
	return max(fromFloat(float64(m.ExportPeakBytes(window))*HostPeakHeadroom), m.HostNeedVulkan(window))
}

// HostNeedQNN has no measured model of QAIRT's compile: a 24 GiB floor or 20 B per
// parameter, growing with the window (Qwen3-0.6B measured 15.6-15.7 GB at 2k and 4k).
func (m Model) HostNeedQNN(window int) int64 {
	base := max(float64(QNNFloorBytes), float64(m.Params)*QNNHostBytesPerParam)
	return fromFloat(math.Ceil(base * (1 + float64(window)/QNNWindowScale)))
}

// DiskNeedLLM is the export's disk: the source download, the converted checkpoint, the
// .pte and a margin for the toolchain.
func (m Model) DiskNeedLLM(pteBytes int64) int64 {
	return add(mul(m.Params, SourceBytesPerParam), mul(m.Params, CheckpointBytesPerParam), pteBytes, ExportDiskMarginBytes)
}

// DiskNeedQNN is the side files, the SDK and the build folders.
func (m Model) DiskNeedQNN(pteBytes int64) int64 {
	return add(mul(m.Params, SourceBytesPerParam), pteBytes, QNNDiskFixedBytes)
}
