package sizing

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Model is what sizing needs to know about one source model.
type Model struct {
	Arch model.Arch
	// HFRope is true when the exported model keeps Hugging Face's rotate-half RoPE tables.
	HFRope bool
	// Params is the checkpoint's real parameter count (safetensors total).
	Params int64
	// Family is the model's family as the verdict decided it (family.Verdict.Fam): a size
	// model that depends on the family's recipe (MediaTek's chunk plan) reads it here
	// rather than looking the family up again.
	Family *family.Family
}

// KVBytesPerToken is the fp32 KV cache per token: attending layers × 2 (K and V) ×
// kv heads × head_dim × 4 bytes. Qwen3-4B: 294,912.
func (m Model) KVBytesPerToken() int64 {
	a := m.Arch
	return mul(a.AttentionLayers(), 2, a.KVHeads, a.HeadDim, FP32Bytes)
}

// KVCacheBytes is the whole window's fp32 cache, allocated in full at load.
func (m Model) KVCacheBytes(window int) int64 { return mul(m.KVBytesPerToken(), int64(window)) }

// The ways an export_llm file keeps its KV cache.
const (
	KVFP32 = "fp32"
	// KVInt8 is export_llm's quantize_kv_cache: int8 values with, per token and KV head, an
	// fp32 scale and an int8 zero point (QuantizedKVCache; docs/research/int8-kv.md).
	KVInt8 = "int8"
)

// KVBytesPerTokenAs is the cache per token when it is kept as cache says (KVFP32 or
// KVInt8): the int8 cache holds head_dim bytes plus a scale and a zero point for each
// attending layer, K and V, and KV head. Qwen3-4B: 76,608 against fp32's 294,912.
func (m Model) KVBytesPerTokenAs(cache string) int64 {
	if cache != KVInt8 {
		return m.KVBytesPerToken()
	}
	a := m.Arch
	return mul(a.AttentionLayers(), 2, a.KVHeads, add(a.HeadDim, Int8KVScaleBytes, Int8KVZeroPointBytes))
}

// MaskBytes is the causal masks the eager model holds during export: one bool byte per
// cell, one mask per attention layer. It grows with the square of the window.
func (m Model) MaskBytes(window int) int64 {
	return mul(m.Arch.AttentionLayers(), int64(window), int64(window))
}

// PerParam is a qmode's bytes per linear parameter in a backend's table of them (the
// export_llm backends' files differ in their group scales); a qmode the table lacks has no
// size model. Each table's keys are config.QModes (the backends' tests hold them to it).
func PerParam(table map[string]float64, qmode string) (float64, error) {
	b, ok := table[qmode]
	if !ok {
		return 0, fmt.Errorf("no size model for qmode %q", qmode)
	}
	return b, nil
}

// RopeBytes is what the RoPE tables add to the file per token and head_dim.
func (m Model) RopeBytes() float64 {
	if m.HFRope {
		return RopeBytesHF
	}
	return RopeBytesMeta
}

// NPUKVCacheBytes is the 16-bit KV cache the NPU runners allocate for every layer.
func (m Model) NPUKVCacheBytes(window int) int64 {
	a := m.Arch
	return mul(a.AttentionLayers(), 2, a.KVHeads, a.HeadDim, NPUKVBytesPerElement, int64(window))
}

// ExportPeakBytes is the raw export peak: fp32 weights, the KV cache, the causal masks and
// a fixed 2.5 GB for Python, torch and the lowering.
func (m Model) ExportPeakBytes(window int) int64 {
	a := m.Arch
	w := float64(a.EmbeddingParams()+a.LinearParams()) * FP32Bytes * ExportPeakWeights
	return add(fromFloat(w), m.KVCacheBytes(window), m.MaskBytes(window), ExportFixedBytes)
}

// DiskNeedLLM is the export's disk: the source download, the converted checkpoint, the
// .pte and a margin for the toolchain.
func (m Model) DiskNeedLLM(pteBytes int64) int64 {
	return add(mul(m.Params, SourceBytesPerParam), mul(m.Params, CheckpointBytesPerParam), pteBytes, ExportDiskMarginBytes)
}
