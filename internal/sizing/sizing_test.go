package sizing_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/internal/sizing/sizingtest"
	"github.com/stretchr/testify/assert"
)

// TestWorkedNumbers holds the shared size model to worked figures; each backend's tests
// hold its own files and host needs to theirs (internal/backend/<name>).
func TestWorkedNumbers(t *testing.T) {
	q06, q17, q4 := sizingtest.Sized(t, "Qwen/Qwen3-0.6B"), sizingtest.Sized(t, "Qwen/Qwen3-1.7B"), sizingtest.Sized(t, "Qwen/Qwen3-4B")
	smol360 := sizingtest.Sized(t, "HuggingFaceTB/SmolLM2-360M-Instruct")
	tests := []struct {
		name      string
		got, want int64
	}{
		{"Qwen3-1.7B KV at 32k", q17.KVCacheBytes(32768), 7_516_192_768},
		{"Qwen3-0.6B KV per token", q06.KVBytesPerToken(), 229_376},
		{"Qwen3-4B KV per token", q4.KVBytesPerToken(), 294_912},
		{"Qwen3-4B KV at 32k", q4.KVCacheBytes(32768), 9_663_676_416},
		{"SmolLM2-360M KV per token", smol360.KVBytesPerToken(), 81_920},
		{"SmolLM2-360M KV at 2k", smol360.KVCacheBytes(2048), 167_772_160},
		{"Qwen3-0.6B masks at 32k", q06.MaskBytes(32768), 30_064_771_072},
		{"Qwen3-0.6B export peak 2k", q06.ExportPeakBytes(2048), 6_093_469_952},
		{"Qwen3-0.6B NPU KV at 2k", q06.NPUKVCacheBytes(2048), 234_881_024},
		// int8 cache: head_dim int8 values, an fp32 scale and an int8 zero point per token,
		// layer, K or V and KV head (docs/research/int8-kv.md).
		{"Qwen3-0.6B int8 KV per token", q06.KVBytesPerTokenAs(sizing.KVInt8), 59_584},
		{"Qwen3-4B int8 KV per token", q4.KVBytesPerTokenAs(sizing.KVInt8), 76_608},
		{"Qwen3-4B fp32 KV per token by name", q4.KVBytesPerTokenAs(sizing.KVFP32), 294_912},
		// the tiny Qwen3 the real export measured: 168 bytes a token planned (512 for fp32)
		{"tiny Qwen3 int8 KV per token", tinyQwen3.KVBytesPerTokenAs(sizing.KVInt8), 168},
		{"tiny Qwen3 fp32 KV per token", tinyQwen3.KVBytesPerToken(), 512},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	_, err := sizing.PerParam(map[string]float64{"8da4w": 0.5}, "int8")
	assert.EqualError(t, err, `no size model for qmode "int8"`)
}

// tinyQwen3 is internal/tinymodel's Qwen3 as int8-kv.md measured it: 2 layers, 2 KV heads
// of 16.
var tinyQwen3 = sizing.Model{Arch: model.Arch{Layers: 2, KVHeads: 2, HeadDim: 16}}

// fleet is the Blacksmith x86 fleet as measured
// (docs/research/sizing.md#runner-fleet-and-test-hosts).
var fleet = []config.Runner{
	{Name: "small", Label: "blacksmith-8vcpu-ubuntu-2404", RAMBytes: 33_229_729_792, DiskBytes: 160e9, SwapGiB: 24},
	{Name: "medium", Label: "blacksmith-16vcpu-ubuntu-2404", RAMBytes: 66_577_858_560, DiskBytes: 750e9, SwapGiB: 64},
	{Name: "large", Label: "blacksmith-32vcpu-ubuntu-2404", RAMBytes: 121_766_014_976, DiskBytes: 1.5e12, SwapGiB: 96},
}

// TestPickRunner: the smallest tier whose RAM holds the need, else the largest that holds
// it with its swap, else why none can (memory, then disk).
func TestPickRunner(t *testing.T) {
	fit := sizing.Fit{Reserve: 1_000_000_000}
	tests := []struct {
		name       string
		ram, disk  int64
		want, skip string
		swap       bool
	}{
		{"fits the small tier", 20e9, 100e9, "small", "", false},
		{"needs the medium tier", 40e9, 0, "medium", "", false},
		{"needs the medium tier's disk", 20e9, 500e9, "medium", "", false},
		{"only the large tier's swap", 200e9, 0, "large", "", true},
		{"too much memory", 300e9, 0, "", "needs about 279.4 GiB of memory; the largest runner (blacksmith-32vcpu-ubuntu-2404) has 113.4 GiB RAM + 96 GiB swap", false},
		{"too much disk", 1, 2e12, "", "needs about 2000.00 GB of disk; the runners that hold its memory have less", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := sizing.PickRunner(fleet, tc.ram, tc.disk, fit)
			assert.Equal(t, tc.skip, c.Skip)
			assert.Equal(t, tc.swap, c.UsesSwap)
			if tc.want == "" {
				assert.Nil(t, c.Runner)
				return
			}
			if assert.NotNil(t, c.Runner) {
				assert.Equal(t, tc.want, c.Runner.Name)
			}
		})
	}
	assert.Equal(t, "no runner tier is configured for this backend", sizing.PickRunner(nil, 1, 1, fit).Skip)
}
