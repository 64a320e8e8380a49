package sizing_test

import (
	"context"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
	"github.com/experimentalmachines/exe-expo/pkg/source"
)

// sized is the size model plan uses for id, opened as an offline plan opens it: from the
// embedded snapshot, with the Hub's own parameter total.
func sized(t testing.TB, id string) sizing.Model {
	t.Helper()
	src, offline, err := source.Open(context.Background(), id, "main", nil)
	if err != nil || !offline {
		t.Fatalf("open %s offline: %v (offline %v)", id, err, offline)
	}
	m, err := plan.SizingModel(src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWorkedNumbers holds the size model to worked figures. The XNNPACK .pte figures are no
// longer the reference's (499,968,163 for Qwen3-0.6B at 2k, its 1% factor): the model counts
// the embedding scales and each layer's program and delegate graph instead, measured on real
// files (docs/research/realtool.md), which puts Qwen3-0.6B's measured 496,570,368 bytes
// 0.04% off instead of 0.7%.
func TestWorkedNumbers(t *testing.T) {
	q06, q17, q4 := sized(t, "Qwen/Qwen3-0.6B"), sized(t, "Qwen/Qwen3-1.7B"), sized(t, "Qwen/Qwen3-4B")
	smol360 := sized(t, "HuggingFaceTB/SmolLM2-360M-Instruct")
	pte := func(m sizing.Model, q string, w int) int64 {
		v, err := m.PTEBytesXNNPACK(q, w)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const overhead = 500_000_000
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
		{"Qwen3-0.6B .pte 2k", pte(q06, "8da4w", 2048), 496_384_428},
		{"Qwen3-0.6B .pte 16k", pte(q06, "8da4w", 16384), 525_744_556},
		{"Qwen3-1.7B .pte 8k", pte(q17, "8da4w", 8192), 1_297_062_316},
		{"Qwen3-1.7B resident 8k", pte(q17, "8da4w", 8192) + q17.KVCacheBytes(8192) + overhead, 3_676_110_508},
		{"Qwen3-1.7B resident 16k", pte(q17, "8da4w", 16384) + q17.KVCacheBytes(16384) + overhead, 5_571_935_916},
		{"Qwen3-0.6B export peak 2k", q06.ExportPeakBytes(2048), 6_093_469_952},
		{"Qwen3-0.6B MediaTek calibration at 512", q06.MediaTekNeed(512, 9, 128, 14, false).CalibrationBytes, int64(float64(10*229_376*512)*3.8) + 751_632_384*6},
		{"Qwen3-0.6B NPU KV at 2k", q06.NPUKVCacheBytes(2048), 234_881_024},
		{"Qwen3-0.6B MediaTek embedding", mtk(t, q06, "A16W4", 4, 512).EmbeddingBytes, 622_329_856},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if _, err := q06.PTEBytesXNNPACK("int8", 2048); err == nil || err.Error() != `no size model for qmode "int8"` {
		t.Errorf("int8: %v", err)
	}
	// LFM2.5 calibrates one prompt at a time: no disk, and it grows little with the window.
	lfm := sized(t, "LiquidAI/LFM2.5-1.2B-Base")
	n512, n32k := lfm.MediaTekNeed(512, 9, 128, 14, true), lfm.MediaTekNeed(32768, 9, 128, 14, true)
	if n32k.DiskBytes != 0 || float64(n32k.CalibrationBytes) > 1.2*float64(n512.CalibrationBytes) || n32k.Prompts != 23 {
		t.Errorf("streaming needs %+v → %+v", n512, n32k)
	}
	// the same model without streaming would cache 9 prompts × 10 steps × the full cache
	if got := lfm.MediaTekNeed(32768, 9, 128, 14, false).DiskBytes; got != 9*10*lfm.KVBytesPerTokenAllLayers()*32768 {
		t.Errorf("non-streaming disk = %d", got)
	}
}

func mtk(t *testing.T, m sizing.Model, prec string, chunks, w int) sizing.MTKFiles {
	f, err := m.PTEBytesMediaTek(prec, chunks, w)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fleet is the Blacksmith x86 fleet as measured
// (docs/research/sizing.md#runner-fleet-and-test-hosts).
var fleet = []config.Runner{
	{Name: "small", Label: "blacksmith-8vcpu-ubuntu-2404", RAMBytes: 33_229_729_792, DiskBytes: 160e9, SwapGiB: 24},
	{Name: "medium", Label: "blacksmith-16vcpu-ubuntu-2404", RAMBytes: 66_577_858_560, DiskBytes: 750e9, SwapGiB: 64},
	{Name: "large", Label: "blacksmith-32vcpu-ubuntu-2404", RAMBytes: 121_766_014_976, DiskBytes: 1.5e12, SwapGiB: 96},
}

func TestPickRunnerVulkan(t *testing.T) {
	fit := sizing.Fit{Reserve: 1_000_000_000}
	tests := []struct {
		id   string
		want map[int]string
	}{
		{"Qwen/Qwen3-0.6B", map[int]string{2048: "small", 8192: "small", 16384: "small", 32768: "large"}},
		{"Qwen/Qwen3-4B", map[int]string{2048: "small", 8192: "small", 16384: "medium", 32768: "large"}},
		{"meta-llama/Llama-3.2-1B-Instruct", map[int]string{2048: "small", 16384: "small", 32768: "medium"}},
	}
	for _, tc := range tests {
		m := sized(t, tc.id)
		for w, want := range tc.want {
			c := sizing.PickRunner(fleet, m.HostNeedVulkan(w), 0, fit)
			if c.Runner == nil || c.Runner.Name != want {
				t.Errorf("%s at %d: %+v, want %s", tc.id, w, c, want)
			}
		}
	}
	m := sized(t, "Qwen/Qwen3-4B")
	if c := sizing.PickRunner(fleet, m.HostNeedVulkan(32768), 0, fit); !c.UsesSwap {
		t.Errorf("Qwen3-4B at 32k should need the large tier's swap: %+v", c)
	}
	if c := sizing.PickRunner(fleet, m.HostNeedVulkan(131072), 0, fit); c.Runner != nil || c.Skip == "" {
		t.Errorf("131072 fits: %+v", c)
	}
	if c := sizing.PickRunner(fleet, 1, 2e12, fit); c.Runner != nil || c.Skip == "" {
		t.Errorf("2 TB of disk fits: %+v", c)
	}
	if m.HostNeedVulkan(2048) >= m.HostNeedXNNPACK(2048) {
		t.Error("Vulkan need should be below XNNPACK need at 2k for Qwen3-4B")
	}
}
