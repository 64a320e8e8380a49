package exportllm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// TestKVCacheOfName: audit grades a published file's cache by its name alone, so the -kv8-
// rule must catch every int8-cache name and nothing else: a folder or a longer tag that
// merely contains "kv8" is no int8 cache, and a file graded fp32 escapes the deep grade.
func TestKVCacheOfName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"xnnpack/Qwen3-4B-8da4w-kv8-32k.pte", sizing.KVInt8},
		{"Qwen3-1.7B-8da4w-kv8-8k.pte", sizing.KVInt8},
		{"xnnpack/SmolLM2-360M-Instruct-fp32-kv8-2k.pte", sizing.KVInt8},
		{"xnnpack/Qwen3-4B-8da4w-32k.pte", sizing.KVFP32},
		{"xnnpack-kv8-files/Qwen3-4B-8da4w-32k.pte", sizing.KVFP32},
		{"xnnpack/Qwen3-4B-8da4w-kv80-32k.pte", sizing.KVFP32},
		{"xnnpack/Qwen3-4B-8da4w-kv8.pte", sizing.KVFP32},
		{"xnnpack/Qwen3-4B-8da4wkv8-32k.pte", sizing.KVFP32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, exportllm.KVCacheOfName(tc.name))
		})
	}
}
