package backend_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	_ "github.com/experimentalmachines/exe-expo/internal/backend/all"
	"github.com/experimentalmachines/exe-expo/internal/backend/enn"
	"github.com/experimentalmachines/exe-expo/internal/backend/mediatek"
	"github.com/experimentalmachines/exe-expo/internal/backend/qnn"
	"github.com/experimentalmachines/exe-expo/internal/backend/vulkan"
	"github.com/experimentalmachines/exe-expo/internal/backend/xnnpack"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
)

func TestRegistry(t *testing.T) {
	assert.Equal(t, []string{"xnnpack", "vulkan", "qnn", "mediatek", "enn"}, backend.Names())
	assert.Equal(t, []string{"xnnpack", "vulkan", "qnn", "mediatek"}, backend.NamesOf(backend.Exportable()), "ENN is listed, never exported")
	assert.Nil(t, backend.ByName("coreml"))
	assert.Panics(t, func() { backend.Register(&backend.Backend{Name: "qnn"}) }, "a name picks one backend")
	assert.Equal(t, []string{"Vulkan (GPU)", "MediaTek NeuroPilot (APU)"}, backend.Titles([]string{"vulkan", "nosuch", "mediatek"}))
	for _, b := range backend.Exportable() {
		assert.NotNil(t, b.Estimate, b.Name)
		assert.NotNil(t, b.Describe, b.Name)
		assert.NotNil(t, b.Check.Program, b.Name)
		assert.NotNil(t, b.Gate.What, b.Name)
		assert.NotEmpty(t, b.Stages, b.Name)
		assert.NotEmpty(t, b.Card.Verified, b.Name)
		assert.Equal(t, b.Name, b.Check.Backend, "the check names its backend")
		assert.Positive(t, b.Check.SizeError, "%s: its files' size tolerance", b.Name)
	}
	assert.Same(t, xnnpack.Backend, backend.GPTQ(), "the solve converts the checkpoint as XNNPACK's export does")
}

// TestChipsReachConfig: config validates pipeline.yaml's chips against the per-chip
// backends the registry gives it, with their keys and platform rules.
func TestChipsReachConfig(t *testing.T) {
	require.NotNil(t, config.ChipBackends)
	assert.Equal(t, []config.ChipBackend{
		{Name: "qnn", Key: "export.qnn.socs"},
		{Name: "mediatek", Key: "export.mediatek.socs", Platform: "a MediaTek chip needs its --platform (DX3, DX4)"},
	}, config.ChipBackends())
	for _, b := range backend.Exportable() {
		if b.Chips == nil {
			continue
		}
		cfg, err := config.Default()
		require.NoError(t, err)
		for _, soc := range b.Chips.List(cfg) {
			assert.Equal(t, b.Name, cfg.Chips[soc].Backend, "%s lists %s", b.Chips.Key, soc)
		}
	}
}

func TestWindows(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.Export.ContextTiers = []int{8192, 2048, 4096, 2048}
	cfg.Export.MediaTek.CacheSize = 1024
	assert.Equal(t, []int{2048, 4096, 8192}, xnnpack.Backend.Windows(cfg), "sorted, without repeats")
	assert.Equal(t, []int{1024, 2048, 4096, 8192}, mediatek.Backend.Windows(cfg), "MediaTek adds its cache size")
	cfg.Export.MediaTek.CacheSize = 4096
	assert.Equal(t, []int{2048, 4096, 8192}, mediatek.Backend.Windows(cfg))
}

// TestSupport is where per-backend refusals are decided, once: each row's sentence is the
// one plan prints and export refuses with.
func TestSupport(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	et := pinned.Version() // the facts table words each refusal with the release it was checked on
	tests := []struct {
		id      string
		b       *backend.Backend
		refusal string // "" when supported
	}{
		{"Qwen/Qwen3-0.6B", xnnpack.Backend, ""},
		{"Qwen/Qwen3-0.6B", qnn.Backend, ""},
		{"Qwen/Qwen3-4B", qnn.Backend, "no entry for this checkpoint in ExecuTorch " + et + "'s Qualcomm LLM scripts (they compile fixed registry checkpoints only)"},
		{"Qwen/Qwen2.5-0.5B-Instruct", mediatek.Backend, "the MediaTek runner's additive -100 attention mask leaks for Qwen2.5 (KL 0.013, 98% top-1 agreement with fp32), so it is not published"},
		{"LiquidAI/LFM2.5-1.2B-Base", vulkan.Backend, "ExecuTorch " + et + "'s Vulkan delegate has no kernel for LFM2's short convolution (the 1.4.0 runtime segfaulted at the first prefill, and none of the delegate's convolution rules has changed since)"},
		{"LiquidAI/LFM2.5-1.2B-Base", xnnpack.Backend, ""},
		// Gemma 3 goes to XNNPACK by optimum-executorch
		{"google/gemma-3-1b-it", xnnpack.Backend, ""},
		{"google/gemma-3-1b-it", vulkan.Backend, "Gemma 3 is not in ExecuTorch " + et + " export_llm's model list, and optimum-executorch, the exporter that builds it beside ExecuTorch " + et + " (release 1.1.0), has no Vulkan recipe (coreml, cuda, metal, portable and xnnpack only)"},
		// export_llm builds Phi-4-mini, by exe-expo's own converter and params
		{"microsoft/Phi-4-mini-instruct", xnnpack.Backend, ""},
		{"microsoft/Phi-4-mini-instruct", vulkan.Backend, ""},
		{"google/gemma-3-1b-it", mediatek.Backend, "the MediaTek scripts expect model_type gemma3, and the Hugging Face config says gemma3_text"},
		{"Qwen/Qwen3-0.6B", enn.Backend, "waiting for an LLM path upstream: ExecuTorch " + et + " ships the Samsung ENN delegate with CNN examples only"},
	}
	for _, tc := range tests {
		t.Run(tc.id+"/"+tc.b.Name, func(t *testing.T) {
			src, err := snapshot.Load(context.Background(), tc.id)
			require.NoError(t, err)
			fam := family.ByArchitecture(src.Config.Architectures())
			require.NotNil(t, fam)
			assert.Equal(t, tc.refusal, tc.b.Support(cfg, src, fam))
			v := backend.Evaluate(cfg, src).Backend(tc.b.Name)
			assert.Equal(t, tc.refusal == "", v.OK, "Evaluate agrees")
			assert.Equal(t, tc.refusal, v.Reason)
		})
	}
}
