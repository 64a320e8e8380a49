package check

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// KVCache is the KV cache a program holds, read back from the file: export_llm's caches
// are memory-planned buffers of forward, one [1, window, KV heads, ·] tensor per layer for
// each of K and V, and for an int8 cache also its per-token scales and zero points
// (docs/research/int8-kv.md). Nothing in the metadata says which cache a file has, so the
// tensors are the evidence: the size model's per-token figure and the name's cache tag are
// held to them.
type KVCache struct {
	// Cache is sizing.KVInt8 when any cache tensor holds int8 values, otherwise KVFP32.
	Cache string `json:"cache"`
	// BytesPerToken is the cache tensors' bytes divided by the window.
	BytesPerToken int64 `json:"bytes_per_token"`
	// Tensors counts the cache tensors (distinct planned places).
	Tensors int `json:"tensors"`
}

// scalarInt8 is the int8 element type (c10::ScalarType numbering).
const scalarInt8 pte.ScalarType = 1

// shapeStatic is TensorShapeDynamism.STATIC: a cache buffer's shape; a call's activations
// are DYNAMIC_BOUND (1) in a dynamic-shape program.
const shapeStatic = 0

// ReadKVCache finds forward's KV cache of window positions: the planned rank-4 tensors of
// static shape [1, window, ·, ·] at distinct places in memory (an in-place update's output
// shares its input's place). An activation can be as long, where a call takes the whole
// window (exe-expo bounds a call's tokens at max_seq_len, which is the window when the
// window is the prefill chunk), but its token dimension is dynamic: written at its bound,
// with a dynamic shape. nil when the program has no such tensor.
func ReadKVCache(prog *pte.Program, window int64) *KVCache {
	m := prog.Method("forward")
	if m == nil || window <= 0 {
		return nil
	}
	type place struct {
		id     uint32
		offset uint64
	}
	seen := map[place]bool{}
	var bytes int64
	kv := &KVCache{Cache: sizing.KVFP32}
	for _, v := range m.Values {
		t := v.Tensor
		if v.Kind != pte.KindTensor || t == nil || !t.Allocated || t.Dynamism != shapeStatic || len(t.Sizes) != 4 || t.Sizes[0] != 1 || int64(t.Sizes[1]) != window {
			continue
		}
		at := place{t.MemoryID, t.MemoryOffset}
		if seen[at] {
			continue
		}
		seen[at] = true
		bytes += t.Bytes()
		kv.Tensors++
		if t.ScalarType == scalarInt8 {
			kv.Cache = sizing.KVInt8
		}
	}
	if kv.Tensors == 0 {
		return nil
	}
	kv.BytesPerToken = bytes / window
	return kv
}

// kvProblems holds the file's cache to the request: the cache the name promises and the
// size model's bytes per token. Nothing is asked when want names no cache (the NPU
// backends keep theirs in their own runtimes).
func kvProblems(prog *pte.Program, want Expect) (*KVCache, []string) {
	if want.KVCache == "" {
		return nil, nil
	}
	kv := ReadKVCache(prog, want.MaxContextLen)
	switch {
	case kv == nil:
		return nil, []string{fmt.Sprintf("forward holds no KV cache of %d positions (no planned [1, %d, heads, dim] tensor): the %s cache asked for is not in the file",
			want.MaxContextLen, want.MaxContextLen, want.KVCache)}
	case kv.Cache != want.KVCache:
		return kv, []string{fmt.Sprintf("the KV cache is %s (%d tensors, %d bytes per token), the recipe asked for %s", kv.Cache, kv.Tensors, kv.BytesPerToken, want.KVCache)}
	case want.KVBytesPerToken > 0 && kv.BytesPerToken != want.KVBytesPerToken:
		return kv, []string{fmt.Sprintf("the %s KV cache holds %d bytes per token, the size model says %d", kv.Cache, kv.BytesPerToken, want.KVBytesPerToken)}
	}
	return kv, nil
}
