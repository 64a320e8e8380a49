package ptetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// LLM is an export_llm-style program: method forward delegated to XNNPACK or Vulkan,
// followed by the metadata methods, with the packed weights in named data as XNNPACK
// stores them.
type LLM struct {
	// Backend is "xnnpack" or "vulkan".
	Backend string
	// Metadata is written in order; ExportLLMMetadata gives export_llm's set.
	Metadata []Meta
	// WeightsSize is the size of the weights segment (0: none). WriteFile leaves it sparse.
	WeightsSize int64
	// BlobSize is the size of the delegate blob (default 4 KiB).
	BlobSize int64
	// KVCache is forward's planned KV cache buffers (KVCacheTensors gives export_llm's).
	KVCache []Planned
}

// KVCacheTensors are the planned buffers of export_llm's KV cache for a window: per layer,
// K and V as [1, window, kvHeads, headDim] in float32, or with int8 in int8 beside their
// float32 scales and int8 zero points of [1, window, kvHeads, 1] (QuantizedKVCache).
func KVCacheTensors(layers, window, kvHeads, headDim int32, int8Cache bool) []Planned {
	var out []Planned
	for range 2 * layers {
		if !int8Cache {
			out = append(out, Planned{ScalarType: 6, Sizes: []int32{1, window, kvHeads, headDim}})
			continue
		}
		out = append(out, Planned{ScalarType: 1, Sizes: []int32{1, window, kvHeads, headDim}},
			Planned{ScalarType: 6, Sizes: []int32{1, window, kvHeads, 1}},
			Planned{ScalarType: 1, Sizes: []int32{1, window, kvHeads, 1}})
	}
	return out
}

// ExportLLMMetadata returns the metadata methods export_llm writes, in its order:
// get_max_seq_len, get_max_context_len, get_n_layers, get_vocab_size, use_kv_cache,
// use_sdpa_with_kv_cache, enable_dynamic_shape, then the base.metadata keys get_bos_id
// (when bos >= 0) and get_eos_ids (when given).
func ExportLLMMetadata(maxSeqLen, maxContextLen int64, bos int64, eos []int64) []Meta {
	md := []Meta{
		{"get_max_seq_len", maxSeqLen},
		{"get_max_context_len", maxContextLen},
		{"get_n_layers", int64(2)},
		{"get_vocab_size", int64(512)},
		{"use_kv_cache", true},
		{"use_sdpa_with_kv_cache", true},
		{"enable_dynamic_shape", true},
	}
	if bos >= 0 {
		md = append(md, Meta{"get_bos_id", bos})
	}
	if eos != nil {
		md = append(md, Meta{"get_eos_ids", eos})
	}
	return md
}

// Spec returns the file's Spec.
func (l LLM) Spec() (Spec, error) {
	size := l.BlobSize
	if size == 0 {
		size = 4 << 10
	}
	var named []Named
	var consts []NamedConst
	if l.WeightsSize > 0 {
		sum := sha256.Sum256([]byte(fmt.Sprintf("weights-%d", l.WeightsSize)))
		named = []Named{{Key: hex.EncodeToString(sum[:]), Blob: Blob{Size: l.WeightsSize}}}
		consts = []NamedConst{{Key: named[0].Key, Size: l.WeightsSize}}
	}
	m := Method{Name: "forward", Planned: l.KVCache}
	switch l.Backend {
	case "xnnpack":
		m.Backend = pte.XnnpackBackend
		m.Blob = XNNPACKGraphBlob(size, Graph{Ops: []string{"FullyConnected"}, Named: consts})
	case "vulkan":
		m.Backend = pte.VulkanBackend
		m.Blob = VulkanGraphBlob(size, Graph{Ops: []string{"aten.linear.default"}, Named: consts})
		m.CompileSpecs = []CompileSpec{{Key: "storage_type_override", Value: []byte{1, 0, 0, 0}}}
	default:
		return Spec{}, fmt.Errorf("LLM backend %q: want xnnpack or vulkan", l.Backend)
	}
	s := Spec{Methods: []Method{m}, Metadata: l.Metadata, NamedData: named}
	return s, nil
}

// QNN is a program as Qualcomm's llama.py writes it: kv_forward (and prefill_forward in
// hybrid mode) on QnnBackend, both pointing at one shared context blob, plus metadata.
type QNN struct {
	// Mode is "hybrid" (default) or "kv".
	Mode string
	// Metadata defaults to QNNMetadata(512, 32).
	Metadata []Meta
	// BlobSize is the context blob size (default 64 KiB); WriteFile leaves it sparse.
	BlobSize int64
}

// QNNMetadata returns part of static_llama's getters, with its hard-coded BOS 1 / EOS 2.
func QNNMetadata(window, arLen int64) []Meta {
	return []Meta{
		{"get_ar_len", arLen}, {"get_bos_id", int64(1)}, {"get_eos_id", int64(2)},
		{"get_max_context_len", window}, {"get_max_seq_len", window},
		{"get_n_layers", int64(2)}, {"get_use_kv_cache", true}, {"get_vocab_size", int64(512)},
	}
}

// Spec returns the file's Spec.
func (q QNN) Spec() (Spec, error) {
	size := q.BlobSize
	if size == 0 {
		size = 64 << 10
	}
	md := q.Metadata
	if md == nil {
		md = QNNMetadata(512, 32)
	}
	names := []string{"kv_forward", "prefill_forward"}
	switch q.Mode {
	case "", "hybrid":
	case "kv":
		names = names[:1]
	default:
		return Spec{}, fmt.Errorf("QNN mode %q: want hybrid or kv", q.Mode)
	}
	var ms []Method
	for _, n := range names {
		ms = append(ms, Method{Name: n, Backend: pte.QnnBackend, Blob: QNNBlob(size),
			CompileSpecs: []CompileSpec{{Key: "qnn_compile_spec", Value: []byte{0x51, 0x4e, 0x4e}}}})
	}
	return Spec{Methods: ms, Metadata: md}, nil
}

// MediaTekChunk is one chunk file of MediaTek's export scripts: one method per shape,
// named <exp>_<tokens>t<window>c_<chunk>, on NeuropilotBackend, with the shared weights in
// named data under <exp>_<chunk>; no metadata methods.
type MediaTekChunk struct {
	Exp          string
	PromptTokens int
	Window       int
	// Chunk is the 0-based chunk index, as in <exp>_<chunk>.pte.
	Chunk int
	// Platform is the platform-config compile spec (default mt6991).
	Platform    string
	WeightsSize int64
}

// MethodNames returns the chunk's method names, sorted as the exporter emits them.
func (c MediaTekChunk) MethodNames() []string {
	names := []string{
		fmt.Sprintf("%s_%dt%dc_%d", c.Exp, c.PromptTokens, c.Window, c.Chunk),
		fmt.Sprintf("%s_1t%dc_%d", c.Exp, c.Window, c.Chunk),
	}
	sort.Strings(names)
	return names
}

// Spec returns the file's Spec.
func (c MediaTekChunk) Spec() (Spec, error) {
	if c.Exp == "" || c.PromptTokens < 1 || c.Window < c.PromptTokens {
		return Spec{}, fmt.Errorf("MediaTek chunk needs exp, prompt tokens >= 1 and window >= prompt tokens")
	}
	platform := c.Platform
	if platform == "" {
		platform = "mt6991"
	}
	key := fmt.Sprintf("%s_%d", c.Exp, c.Chunk)
	var ms []Method
	for i, n := range c.MethodNames() {
		ms = append(ms, Method{Name: n, Backend: pte.NeuropilotBackend,
			Blob: NeuropilotBlob(int64(4096 + 128*i)),
			CompileSpecs: []CompileSpec{
				{Key: "platform-config", Value: []byte(platform)},
				{Key: "ExtractSharedBlobKey", Value: []byte(key)},
			}})
	}
	s := Spec{Methods: ms}
	if c.WeightsSize > 0 {
		s.NamedData = []Named{{Key: key, Blob: Blob{Size: c.WeightsSize}}}
	}
	return s, nil
}

// ExportLLMProgram is the bytes of an XNNPACK export_llm program of a 2,048-token window
// whose enable_dynamic_shape is dynamic: with it false the text runner prefills one token a
// call, the file the speed checks flag.
func ExportLLMProgram(dynamic bool) ([]byte, error) {
	md := ExportLLMMetadata(2048, 2048, 1, []int64{2})
	for i := range md {
		if md[i].Name == "enable_dynamic_shape" {
			md[i].Value = dynamic
		}
	}
	spec, err := LLM{Backend: "xnnpack", Metadata: md}.Spec()
	if err != nil {
		return nil, err
	}
	return Build(spec)
}
