// Package sizing predicts, before any runner time is spent, what each window of a model
// costs: the KV cache, the phone's resident memory, the export's host memory and disk, and
// the runner tier that can build it. It holds what the backends' size models share (the
// model's caches and masks, the export peak, saturating byte arithmetic) with where each
// constant comes from; each backend's own file and host formulas and their constants live
// with the backend (internal/backend/<name>/size.go). docs/benchmarks.md compares the estimates
// with every measured export.
package sizing

// Bytes per parameter and fixed overheads the backends' size models share: the reference
// implementation's size model, docs/research/sizing.md#constants. What only one backend's
// files or tools cost is that backend's own (internal/backend/<name>/size.go).
const (
	FP32Bytes = 4
	// LinearFP32 is an unquantized linear parameter (the fp32 recipe).
	LinearFP32 = 4.0
	// EmbeddingInt8 is the int8 per-channel embedding table.
	EmbeddingInt8 = 1.0
	// RopeBytesHF is what the RoPE tables add to the file per token and head_dim for models
	// that keep Hugging Face's rotate-half layout (Qwen3 0.6B: 2k → 16k grew exactly
	// 16 × 128 bytes per token). RopeBytesMeta is half of it for Meta's interleaved layout
	// (SmolLM2-360M fp32: 1.50 GB at 2k and 16k, 1.51 GB at 32k), see docs/research/sizing.md.
	RopeBytesHF   = 16
	RopeBytesMeta = 8
	// EmbeddingScaleBytes is the int8 embedding's fp32 scale per vocabulary row
	// (per-channel quantization, "8,0"), in every export_llm file.
	EmbeddingScaleBytes = 4
	ExportPeakWeights   = 1.0
	ExportFixedBytes    = 2_500_000_000
	DefaultHostReserve  = 1_000_000_000
)

// The int8 KV cache's quantization parameters per token, layer, K or V, and KV head: an
// fp32 scale and an int8 zero point (ExecuTorch's QuantizedKVCache buffers).
const (
	Int8KVScaleBytes     = 4
	Int8KVZeroPointBytes = 1
)

// RingCopies is how many entries a ring KV cache holds per position of the span it attends
// over: ExecuTorch's ring caches allocate twice their window (RingEntries).
const RingCopies = 2

// Disk and the NPU caches.
const (
	NPUKVBytesPerElement    = 2              // the NPU KV caches are 16-bit
	ExportDiskMarginBytes   = 10_000_000_000 // toolchain, virtualenv, logs
	SourceBytesPerParam     = 2              // bf16/fp16 checkpoints
	CheckpointBytesPerParam = 2              // the converted checkpoint keeps the source dtype
)
