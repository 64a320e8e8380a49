package check

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

func openTestdata(t *testing.T, name string) *pte.Program {
	t.Helper()
	prog, err := pte.OpenFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return prog
}

// TestReadKVCache reads the caches of two real exports of the tiny Qwen3 (2 layers × K, V ×
// 2 KV heads × head_dim 16): fp32 holds 2×2×2×16×4 = 512 bytes per token; int8 holds the
// codes, an fp32 scale and an int8 zero point per token and head, 2×2×2×(16+4+1) = 168.
func TestReadKVCache(t *testing.T) {
	for _, tc := range []struct {
		file   string
		window int64
		want   *KVCache
	}{
		{"tiny-qwen3-fp32kv-512.pte", 512, &KVCache{Cache: "fp32", BytesPerToken: 512, Tensors: 4}},
		{"tiny-qwen3-int8kv-512.pte", 512, &KVCache{Cache: "int8", BytesPerToken: 168, Tensors: 12}},
		{"tiny-qwen3-int8kv-512.pte", 1024, nil}, // no cache of another window
		// The call's activations, [1, 511, ·, ·] at their bound (18 of them [1, 511, 2, 16]),
		// have a dynamic shape: a file whose call takes the whole window holds them as
		// long as its cache, and they are not cache.
		{"tiny-qwen3-int8kv-512.pte", 511, nil},
		{"add.pte", 512, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := ReadKVCache(openTestdata(t, tc.file), tc.window)
			assert.Empty(t, cmp.Diff(tc.want, got))
		})
	}
}

// TestKVProblems holds a file to the cache the recipe asked for and to the size model's
// bytes per token, exactly: one byte off is a problem.
func TestKVProblems(t *testing.T) {
	int8File := openTestdata(t, "tiny-qwen3-int8kv-512.pte")
	for _, tc := range []struct {
		name string
		want Expect
		bad  string
	}{
		{"no cache asked", Expect{MaxContextLen: 512}, ""},
		{"int8 as sized", Expect{MaxContextLen: 512, KVCache: "int8", KVBytesPerToken: 168}, ""},
		{"int8, no figure", Expect{MaxContextLen: 512, KVCache: "int8"}, ""},
		{"one byte under", Expect{MaxContextLen: 512, KVCache: "int8", KVBytesPerToken: 167}, "the int8 KV cache holds 168 bytes per token, the size model says 167"},
		{"one byte over", Expect{MaxContextLen: 512, KVCache: "int8", KVBytesPerToken: 169}, "the int8 KV cache holds 168 bytes per token, the size model says 169"},
		{"fp32 asked", Expect{MaxContextLen: 512, KVCache: "fp32", KVBytesPerToken: 512}, "the KV cache is int8 (12 tensors, 168 bytes per token), the recipe asked for fp32"},
		{"other window", Expect{MaxContextLen: 2048, KVCache: "int8"}, "forward holds no KV cache of 2048 positions (no planned [1, 2048, heads, dim] tensor): the int8 cache asked for is not in the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := kvProblems(int8File, tc.want)
			if tc.bad == "" {
				assert.Empty(t, problems)
				return
			}
			assert.Equal(t, []string{tc.bad}, problems)
		})
	}
}
