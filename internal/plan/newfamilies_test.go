package plan_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newFamily is what plan must say of one of issue 34's models (docs/research/new-families.md):
// the KV cache each token adds (full-attention layers only), the fixed DeltaNet state, the
// KV total at 2k (with Gemma 3's sliding rings), and how each CPU/GPU backend answers.
type newFamily struct {
	id, family     string
	kvPerToken     int64
	state          int64
	kvAt2k         int64
	vulkanRefusal  string // "" when Vulkan is sized ahead like XNNPACK
	xnnpackRoute   string // in XNNPACK's reason: the route that builds the files
	attend, layers int64
	// exported is true for a family exe-expo exports (all of them now): XNNPACK takes
	// it, Vulkan too unless vulkanRefusal says why not, and TestPhi4MiniWindows says which
	// of Phi-4-mini's windows.
	exported bool
}

var newFamilies = []newFamily{
	// Qwen3.5: 6 of 24 (8 of 32) layers attend, 2 (4) KV heads of 256, fp32; the DeltaNet
	// layers keep conv_state and recurrent_state (new-families.md, A: the worked numbers).
	{id: "Qwen/Qwen3.5-0.8B", family: "qwen3_5", kvPerToken: 24_576, state: 20_643_840, kvAt2k: 24_576 * 2048,
		vulkanRefusal: "gated_delta_rule", attend: 6, layers: 24, exported: true},
	{id: "Qwen/Qwen3.5-2B", family: "qwen3_5", kvPerToken: 24_576, state: 20_643_840, kvAt2k: 24_576 * 2048,
		vulkanRefusal: "gated_delta_rule", attend: 6, layers: 24, exported: true},
	{id: "Qwen/Qwen3.5-4B", family: "qwen3_5", kvPerToken: 65_536, state: 53_477_376, kvAt2k: 65_536 * 2048,
		vulkanRefusal: "gated_delta_rule", attend: 8, layers: 32, exported: true},
	// Phi-4-mini: 32 layers × 2 × 8 KV heads × 128 × 4.
	{id: "microsoft/Phi-4-mini-instruct", family: "phi4mini", kvPerToken: 262_144, kvAt2k: 262_144 * 2048,
		attend: 32, layers: 32, exported: true},
	// Gemma 3: only every 6th layer spans the window (3 of 18, 4 of 26) at 2 × 1 × 256 × 4
	// bytes a token; the others keep a ring of 2 × 512 entries each.
	{id: "google/gemma-3-270m-it", family: "gemma3", kvPerToken: 6_144, kvAt2k: 6_144*2048 + 15*1024*2048,
		vulkanRefusal: "no Vulkan recipe", attend: 18, layers: 18, exported: true},
	{id: "google/gemma-3-1b-it", family: "gemma3", kvPerToken: 8_192, kvAt2k: 8_192*2048 + 22*1024*2048,
		vulkanRefusal: "no Vulkan recipe", attend: 26, layers: 26, exported: true},
	// SmolLM3: 36 layers × 2 × 4 KV heads × 128 × 4.
	{id: "HuggingFaceTB/SmolLM3-3B", family: "smollm3", kvPerToken: 147_456, kvAt2k: 147_456 * 2048,
		vulkanRefusal: "no Vulkan recipe", attend: 36, layers: 36, exported: true},
}

// TestNewFamilies plans each of issue 34's fixture configs: every one gets XNNPACK windows
// with sizes (built and costed for the families exe-expo exports, sized ahead for those it
// cannot drive yet, so nothing is laid out or costed), and Vulkan either the same or a
// refusal naming the runtime it was checked on.
func TestNewFamilies(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	// The architecture's own cost: every window with an fp32 cache (the int8 cache's rule
	// is issue 35's, tested in TestInt8KVByArchitecture).
	cfg.Export.XNNPACK.Int8KVFrom, cfg.Export.XNNPACK.Int8KVGainsOnly = 0, false
	for _, tc := range newFamilies {
		t.Run(tc.id, func(t *testing.T) {
			p := planFixture(t, cfg, tc.id)
			v := p.Verdict
			assert.Equal(t, tc.family, v.Family)
			assert.Equal(t, "instruct", v.Variant)
			assert.Empty(t, v.Reasons, "no model-wide refusal")
			require.NotNil(t, p.Arch)
			assert.Equal(t, [2]int64{tc.layers, tc.attend}, [2]int64{p.Arch.Layers, p.Arch.AttentionLayers})

			x := backendOf(t, p, "xnnpack")
			if tc.exported {
				checkExported(t, p, tc)
				return
			}
			assert.False(t, x.OK)
			assert.True(t, x.SizedAhead, x.Reason)
			assert.Contains(t, x.Reason, tc.xnnpackRoute)
			checkRows(t, x, tc)
			assert.Zero(t, x.Jobs, "a window sized ahead is not costed")

			vk := backendOf(t, p, "vulkan")
			if tc.vulkanRefusal != "" {
				checkRefused(t, vk, tc)
			} else {
				assert.True(t, vk.SizedAhead, vk.Reason)
				checkRows(t, vk, tc)
			}
			if len(v.Supported()) == 0 {
				assert.Nil(t, p.Layout, "nothing is laid out in the repo before it can be built")
			}
		})
	}
}

// checkExported holds a family exe-expo exports: XNNPACK's windows built and costed with
// the architecture's KV and state figures, Vulkan the same or refused with its reason.
func checkExported(t *testing.T, p *plan.Plan, tc newFamily) {
	t.Helper()
	names := []string{"xnnpack", "vulkan"}
	if tc.vulkanRefusal != "" {
		names = names[:1]
		checkRefused(t, backendOf(t, p, "vulkan"), tc)
	}
	for _, name := range names {
		bp := backendOf(t, p, name)
		assert.True(t, bp.OK, "%s: %s", name, bp.Reason)
		assert.False(t, bp.SizedAhead, name)
		require.Len(t, bp.Rows, 5, name)
		for _, r := range bp.Rows {
			assert.Equal(t, tc.kvPerToken, r.KVBytesPerToken, r.Label)
			assert.Equal(t, tc.state, r.StateBytes, r.Label)
			assert.Positive(t, r.PTEBytes, r.Label)
		}
		assert.Equal(t, tc.kvAt2k, bp.Rows[0].KVCacheBytes, "%s: KV total at 2k", name)
		assert.Positive(t, bp.Jobs, "%s: an exported family's windows are costed", name)
	}
}

// checkRefused holds a backend's refusal of a family: no rows, the upstream reason and the
// runtime it was checked on.
func checkRefused(t *testing.T, bp plan.BackendPlan, tc newFamily) {
	t.Helper()
	assert.False(t, bp.OK)
	assert.False(t, bp.SizedAhead)
	assert.Empty(t, bp.Rows)
	assert.Contains(t, bp.Reason, tc.vulkanRefusal)
	assert.Contains(t, bp.Reason, "ExecuTorch "+pinned.Version(), "the refusal names the runtime it was checked on")
}

func checkRows(t *testing.T, bp plan.BackendPlan, tc newFamily) {
	t.Helper()
	require.Len(t, bp.Rows, 5)
	for _, r := range bp.Rows {
		assert.Equal(t, tc.kvPerToken, r.KVBytesPerToken, r.Label)
		assert.Equal(t, tc.state, r.StateBytes, r.Label)
		assert.Positive(t, r.PTEBytes, r.Label)
		assert.Equal(t, r.PTEBytes+r.KVCacheBytes+r.StateBytes+410_000_000, r.ResidentBytes, r.Label)
		assert.Zero(t, r.ExportMinutes, r.Label)
	}
	assert.Equal(t, tc.kvAt2k, bp.Rows[0].KVCacheBytes, "KV total at 2k")
}

// TestPhi4MiniWindows: Phi-4-mini is exported at the windows its LongRoPE keeps faithful,
// up to original_max_position_embeddings (4,096); plan skips the larger ones, naming why,
// so they are never laid out, costed or dispatched (new-families.md, B and "Phi-4-mini on
// the real toolchain").
func TestPhi4MiniWindows(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	p := planFixture(t, cfg, "microsoft/Phi-4-mini-instruct")
	assert.True(t, p.Verdict.Eligible, p.Verdict.Reasons)
	for _, name := range []string{"xnnpack", "vulkan"} {
		bp := backendOf(t, p, name)
		var built, skipped []string
		for _, r := range bp.Rows {
			if r.Skip == "" {
				built = append(built, r.Label)
				continue
			}
			skipped = append(skipped, r.Label)
			assert.Contains(t, r.Skip, "window "+family.Commas(int64(r.Window))+" not built, none is above 4,096 tokens: export_llm fixes LongRoPE's factors", r.Label)
		}
		assert.Equal(t, []string{"2k", "4k"}, built, name)
		assert.Equal(t, []string{"8k", "16k", "32k"}, skipped, name)
		if name == "xnnpack" {
			for _, r := range bp.Fallback {
				assert.Equal(t, r.Window > 4096, r.Skip != "", "fp32 fallback %s: %s", r.Label, r.Skip)
			}
		}
	}
}

// TestQwen35IsAChatModelExportedAsText: Qwen3.5's chat checkpoints carry no "Instruct" (the
// base ones end in -Base), and its multimodal wrapper is exported as the text model, which
// the plan says and counts alone.
func TestQwen35IsAChatModelExportedAsText(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	p := planFixture(t, cfg, "Qwen/Qwen3.5-0.8B")
	assert.Equal(t, "instruct", p.Verdict.Variant)
	for _, r := range p.Verdict.Reasons {
		assert.NotContains(t, r, "multimodal")
		assert.NotContains(t, r, "base checkpoint")
	}
	require.Len(t, p.Verdict.Notes, 1)
	assert.Contains(t, p.Verdict.Notes[0], "exports its text model (text_config) only")
	require.NotNil(t, p.Params)
	// no safetensors in the fixture: the text model's count, computed (the checkpoint's
	// single shard of 1,746,942,600 bf16 bytes holds 873M with the vision tower and MTP head)
	assert.Equal(t, "computed from the architecture, text model only", p.Params.Source)
	assert.Equal(t, int64(752_389_952), p.Params.Total)

	base, err := source.OpenDir(context.Background(), fixtureDir("Qwen/Qwen3.5-0.8B"), "Qwen/Qwen3.5-0.8B-Base")
	require.NoError(t, err)
	bp := plan.Build(cfg, base, "")
	assert.Equal(t, "base", bp.Verdict.Variant)
	assert.Contains(t, strings.Join(bp.Verdict.Reasons, " | "), "Qwen3.5-0.8B-Base is a base checkpoint")
}

// TestNewFamiliesArchitecture holds the decoded numbers plan prints for the hybrids.
func TestNewFamiliesArchitecture(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	tests := []struct {
		id   string
		want plan.ArchSummary
	}{
		{"Qwen/Qwen3.5-0.8B", plan.ArchSummary{Layers: 24, AttentionLayers: 6, Heads: 8, KVHeads: 2, HeadDim: 256, Dim: 1024, Intermediate: 3584,
			Vocab: 248_320, Tied: true, HFRope: true, DeltaNetLayers: 18}},
		{"google/gemma-3-270m-it", plan.ArchSummary{Layers: 18, AttentionLayers: 18, Heads: 4, KVHeads: 1, HeadDim: 256, Dim: 640, Intermediate: 2048,
			Vocab: 262_144, Tied: true, HFRope: true, SlidingLayers: 15, SlidingWindow: 512}},
		{"google/gemma-3-1b-it", plan.ArchSummary{Layers: 26, AttentionLayers: 26, Heads: 4, KVHeads: 1, HeadDim: 256, Dim: 1152, Intermediate: 6912,
			Vocab: 262_144, Tied: true, HFRope: true, SlidingLayers: 22, SlidingWindow: 512}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			p := planFixture(t, cfg, tc.id)
			require.NotNil(t, p.Arch)
			assert.Empty(t, cmp.Diff(tc.want, *p.Arch))
		})
	}
}

func fixtureDir(id string) string {
	return filepath.Join("testdata", "new-families", strings.Replace(id, "/", "__", 1))
}

func planFixture(t *testing.T, cfg *config.Config, id string) *plan.Plan {
	t.Helper()
	src, err := source.OpenDir(context.Background(), fixtureDir(id), id)
	require.NoError(t, err)
	return plan.Build(cfg, src, "")
}

func backendOf(t *testing.T, p *plan.Plan, name string) plan.BackendPlan {
	t.Helper()
	for _, bp := range p.Backends {
		if bp.Backend == name {
			return bp
		}
	}
	t.Fatalf("plan of %s has no %s section", p.Model, name)
	return plan.BackendPlan{}
}

// TestInt8KVByArchitecture: the int8 cache counts the layers that keep a cache as the fp32
// one does, head_dim + 5 bytes (codes, an fp32 scale, an int8 zero point) per KV head:
// Qwen3.5's full-attention layers only; Gemma 3's files (optimum-executorch's route) keep
// fp32 whatever the setting, so they offer no int8 row.
func TestInt8KVByArchitecture(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.Export.XNNPACK.Int8KVGainsOnly = false
	for _, tc := range []struct {
		id   string
		int8 int64
	}{
		{"Qwen/Qwen3.5-0.8B", 6 * 2 * 2 * (256 + 5)},
		{"Qwen/Qwen3.5-4B", 8 * 2 * 4 * (256 + 5)},
		{"microsoft/Phi-4-mini-instruct", 32 * 2 * 8 * (128 + 5)},
		{"google/gemma-3-1b-it", 0},
	} {
		t.Run(tc.id, func(t *testing.T) {
			x := backendOf(t, planFixture(t, cfg, tc.id), "xnnpack")
			require.NotEmpty(t, x.Rows)
			r := x.Rows[0]
			if tc.int8 == 0 {
				assert.Equal(t, "fp32", r.KVCache)
				assert.Empty(t, r.ResidentByCache, "one cache: no table per cache")
				return
			}
			assert.Equal(t, "int8", r.KVCache)
			assert.Equal(t, tc.int8, r.KVBytesPerToken)
			assert.Equal(t, r.PTEBytes+tc.int8*int64(r.Window)+r.StateBytes+410_000_000, r.ResidentByCache["int8"])
		})
	}
}
