package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/golden"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanGolden(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Qwen/Qwen3-1.7B", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "google/gemma-3-1b-it", "LiquidAI/LFM2.5-1.2B-Base"} {
		t.Run(id, func(t *testing.T) {
			src, offline, err := source.Open(context.Background(), id, "main", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !offline || !strings.Contains(src.Origin, "embedded snapshot hf-configs-") {
				t.Errorf("offline=%v origin=%q", offline, src.Origin)
			}
			p := plan.Build(cfg, src, "")
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			name := strings.ReplaceAll(id, "/", "__")
			golden.Check(t, filepath.Join("testdata", name+".txt"), text.Bytes())
			js, _ := json.MarshalIndent(p, "", "  ")
			golden.Check(t, filepath.Join("testdata", name+".json"), append(js, '\n'))
		})
	}
}

func TestPlanRows(t *testing.T) {
	cfg, _ := config.Default()
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Build(cfg, src, "xnnpack")
	if len(p.Backends) != 1 || p.Backends[0].Backend != "xnnpack" || len(p.Backends[0].Rows) != 5 {
		t.Fatalf("backends = %+v", p.Backends)
	}
	r := p.Backends[0].Rows[4]
	// 32k keeps an int8 cache (xnnpack.int8_kv_cache_from): 28 × 2 × 8 × (128 + 5) × 32,768
	// bytes, and fits the phone budget the fp32 cache's 7.5 GB did not.
	if r.Window != 32768 || r.KVCache != "int8" || r.KVCacheBytes != 1_952_448_512 || !r.FitsPhone || r.ResidentByCache["fp32"] != 9_273_586_732 {
		t.Errorf("32k row = %+v", r)
	}
	// 32k needs the largest ARM runner and its swap; 2k fits the 8-vCPU one.
	if !r.UsesSwap || r.Runner != "blacksmith-32vcpu-ubuntu-2404-arm" || p.Backends[0].Rows[0].Runner != "blacksmith-8vcpu-ubuntu-2404-arm" {
		t.Errorf("runners: 2k %q, 32k %q swap=%v", p.Backends[0].Rows[0].Runner, r.Runner, r.UsesSwap)
	}
	m := plan.Build(cfg, src, "mediatek").Backends[0]
	if m.Rows[0].Window != 512 || len(m.Rows[0].Chunks) != 4 || m.Rows[5].Skip == "" {
		t.Errorf("mediatek rows: %+v", m.Rows)
	}
}

// The table says its units, and the line under it says what phone and fits phone are and
// which settings decide them: with a 2.5 GB budget the line says so and 4k no longer fits.
func TestTableKeyFollowsTheConfig(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	cfg.Export.DeviceBudgetBytes = 2_500_000_000
	p := plan.Build(cfg, src, "xnnpack")
	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	out := text.String()
	assert.Contains(t, out, "window  KV B/token  KV total GB  .pte est. GB  phone GB  fits phone  host need GiB  runner\n")
	assert.Contains(t, out, "\nphone = .pte + KV cache + 0.41 GB runtime (export.runtime_overhead_bytes), what the handset holds; "+
		"fits phone = phone ≤ 2.50 GB, the budget in pipeline.yaml's export.device_budget_bytes; "+
		"per phone = the largest window whose phone bytes fit what a handset of that RAM leaves the app, or its vendor's per-process limit where that is lower (export.phone_classes). GB = 10^9 bytes, GiB = 2^30 bytes.\n")
	rows := p.Backends[0].Rows
	// the phone table: each class gets the largest window whose phone bytes fit its share
	for _, f := range p.Backends[0].Phones {
		for _, r := range rows {
			if r.Window == f.Window {
				assert.LessOrEqual(t, r.ResidentBytes, f.AppBytes, "%d GiB: %s", f.RAMGiB, r.Label)
			}
			if r.Window > f.Window && r.Skip == "" {
				assert.Greater(t, r.ResidentBytes, f.AppBytes, "%d GiB could hold %s", f.RAMGiB, r.Label)
			}
		}
	}
	// 4k and up keep an int8 cache, where it lets a smaller phone hold the window
	// (xnnpack.int8_kv_cache_gains_only): the classes reach further than with fp32 alone.
	assert.Contains(t, out, "  largest window per phone: 4 GB phone: 8k, 6 GB phone: 16k, 8 GB phone: 32k, 12 GB phone: 32k, 16 GB phone: 32k\n")
	assert.Contains(t, out, "    every window with an fp32 KV cache: 4 GB phone: 2k, 6 GB phone: 4k, 8 GB phone: 8k, 12 GB phone: 16k, 16 GB phone: 16k\n")
	require.Len(t, rows, 5)
	assert.True(t, rows[0].FitsPhone, "2k: %d resident bytes", rows[0].ResidentBytes)
	assert.Equal(t, "fp32", rows[0].KVCache, "2k fits the 4 GB class with fp32: int8 gains no phone")
	assert.Equal(t, "int8", rows[1].KVCache, "4k fits the 4 GB class only with int8")
	assert.True(t, rows[1].FitsPhone, "4k: %d resident bytes", rows[1].ResidentBytes)

	// no table (every backend refused): no key either
	llama4, _, err := source.Open(context.Background(), "meta-llama/Llama-4-Scout-17B-16E-Instruct", "main", nil)
	require.NoError(t, err)
	text.Reset()
	require.NoError(t, plan.Build(cfg, llama4, "").WriteText(&text))
	assert.NotContains(t, text.String(), "fits phone")
}

// TestFP32Fallback: the backend whose quantized files the gate grades (XNNPACK) shows the
// fp32 recipe's rows beside its own, sized as the published SmolLM2-360M fp32 files (1.50 GB
// at 2k to 16k, 1.51 GB at 32k on its card); backends the gate does not grade show none.
func TestFP32Fallback(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	src, _, err := source.Open(context.Background(), "HuggingFaceTB/SmolLM2-360M-Instruct", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "")
	for _, bp := range p.Backends {
		if bp.Backend != "xnnpack" {
			assert.Empty(t, bp.Fallback, bp.Backend)
			continue
		}
		require.Len(t, bp.Fallback, len(bp.Rows))
		for i, f := range bp.Fallback {
			assert.Equal(t, bp.Rows[i].Window, f.Window)
			want := 1.50
			if f.Window == 32768 {
				want = 1.51
			}
			assert.InDelta(t, want, float64(f.PTEBytes)/1e9, 0.005, f.Label)
			assert.Greater(t, f.ResidentBytes, bp.Rows[i].ResidentBytes, "fp32 holds more than 8da4w at %s", f.Label)
			assert.NotEmpty(t, f.Runner, f.Label)
		}
	}
	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.Contains(t, text.String(), "  fp32 fallback, for a window whose quantized file fails the decision gate (exported when it fits the phone):\n")
}
