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
	// RopeOneWindow is true when the RoPE tables hold the window's positions once. export_llm
	// builds them twice as long whenever the params set ffn_dim_multiplier (its rope.py),
	// which every family's params do but Phi-4-mini's (family.phi4miniPlan), and the
	// RoPE constants were measured on such files.
	RopeOneWindow bool
	// Params is the checkpoint's real parameter count (safetensors total).
	Params int64
	// Family is the model's family as the verdict decided it (family.Verdict.Fam): a size
	// model that depends on the family's recipe (MediaTek's chunk plan) reads it here
	// rather than looking the family up again.
	Family *family.Family
}

// KVBytesPerToken is the fp32 KV cache each token of the window adds: the layers whose cache
// spans the window × 2 (K and V) × kv heads × head_dim × 4 bytes. Qwen3-4B: 294,912;
// Qwen3.5-0.8B: 24,576 (6 full-attention layers of 24; the DeltaNet layers keep a fixed
// state, StateBytes); Gemma 3 1B: 8,192 (4 of 26; the sliding layers' rings are fixed,
// SlidingKVBytesAs).
func (m Model) KVBytesPerToken() int64 { return m.KVBytesPerTokenAs(KVFP32) }

// KVCacheBytes is the whole window's fp32 cache, allocated in full at load.
func (m Model) KVCacheBytes(window int) int64 { return m.KVCacheBytesAs(KVFP32, window) }

// KVCacheBytesAs is the whole window's cache kept as cache says: the full layers' cache of
// window entries and the sliding layers' rings.
func (m Model) KVCacheBytesAs(cache string, window int) int64 {
	return add(mul(m.KVBytesPerTokenAs(cache), int64(window)), m.SlidingKVBytesAs(cache, window))
}

// RingEntries is how many entries a sliding layer's ring cache holds for a window: twice
// the span it attends over (the sliding window, or the window when that is shorter).
// transformers' StaticSlidingWindowLayer caps the layer's cache at min(sliding_window,
// max_cache_len), and the ring that optimum-executorch puts in its place (ExecuTorch's
// CustomRingKVCache, custom_kv_cache.py) allocates twice its max_context_length, as
// ExecuTorch's own RingKVCache does (attention.py). Gemma 3 (512): 1,024.
func RingEntries(slidingWindow int64, window int) int64 {
	return RingCopies * min(slidingWindow, int64(window))
}

// SlidingKVBytesAs is the sliding layers' ring caches (Gemma 3): sliding layers ×
// RingEntries × the bytes a layer keeps per entry; 0 when no layer slides.
func (m Model) SlidingKVBytesAs(cache string, window int) int64 {
	a := m.Arch
	n := a.SlidingLayers()
	if n == 0 {
		return 0
	}
	return mul(n, RingEntries(a.SlidingWindowLen, window), m.kvLayerBytes(cache))
}

// kvLayerBytes is what one layer's cache keeps per entry: K and V for every KV head, each
// head_dim values of fp32, or of int8 with a scale and a zero point.
func (m Model) kvLayerBytes(cache string) int64 {
	a := m.Arch
	if cache == KVInt8 {
		return mul(2, a.KVHeads, add(a.HeadDim, Int8KVScaleBytes, Int8KVZeroPointBytes))
	}
	return mul(2, a.KVHeads, a.HeadDim, FP32Bytes)
}

// windowLayers are the attending layers whose cache spans the whole window.
func (m Model) windowLayers() int64 { return m.Arch.AttentionLayers() - m.Arch.SlidingLayers() }

// StateBytes is the fixed recurrent state of Qwen3.5's DeltaNet layers, fp32 whatever the
// window and the KV cache: per layer, conv_state [conv_dim, kernel] and recurrent_state
// [value heads, key head_dim, value head_dim] (ExecuTorch's AttentionGatedDeltaNet
// buffers, docs/research/new-families.md, A). Qwen3.5-0.8B: 20,643,840; 4B: 53,477,376.
// 0 for models without DeltaNet layers.
func (m Model) StateBytes() int64 {
	a := m.Arch
	d := a.DeltaNet
	perLayer := add(mul(d.ConvDim(), d.ConvKernel), mul(d.ValueHeads, d.KeyHeadDim, d.ValueHeadDim))
	return mul(a.DeltaNetLayers(), perLayer, FP32Bytes)
}

// KVCaches are the ways the model's files can keep their KV cache: fp32 and int8 for
// export_llm's, fp32 only for optimum-executorch's (its custom cache has no int8 form).
func (m Model) KVCaches() []string {
	if m.optimum() {
		return []string{KVFP32}
	}
	return []string{KVFP32, KVInt8}
}

// optimum reports that the model's files are built by optimum-executorch.
func (m Model) optimum() bool {
	return m.Family != nil && m.Family.Route.Tool == family.RouteOptimum
}

// RotaryDim is the part of head_dim that RoPE rotates, and so the width of its tables:
// head_dim × partial_rotary_factor (Phi-4-mini 96 of 128, Qwen3.5 64 of 256).
func (m Model) RotaryDim() int64 {
	a := m.Arch
	if a.PartialRotary == "" {
		return a.HeadDim
	}
	f, err := a.PartialRotary.Float64()
	if err != nil { // model checked that it parses
		return a.HeadDim
	}
	return int64(float64(a.HeadDim) * f)
}

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
	return mul(m.windowLayers(), m.kvLayerBytes(cache))
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

// RopeBytes is what the RoPE tables add to the file per token and rotated dimension;
// none for optimum-executorch's files, whose model computes the rotation from its inverse
// frequencies at each step.
func (m Model) RopeBytes() float64 {
	if m.optimum() {
		return 0
	}
	b := float64(RopeBytesMeta)
	if m.HFRope {
		b = RopeBytesHF
	}
	if m.RopeOneWindow {
		b /= 2
	}
	return b
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
	return add(fromFloat(w), m.KVCacheBytes(window), m.StateBytes(), m.MaskBytes(window), ExportFixedBytes)
}

// DiskNeedLLM is the export's disk: the source download, the converted checkpoint, the
// .pte and a margin for the toolchain.
func (m Model) DiskNeedLLM(pteBytes int64) int64 {
	return add(mul(m.Params, SourceBytesPerParam), mul(m.Params, CheckpointBytesPerParam), pteBytes, ExportDiskMarginBytes)
}
