// Package mediatek is NeuroPilot's APU: ExecuTorch's examples/mediatek scripts calibrate
// and compile a model in chunks, per chip, for one cache size; the app knows it as
// neuropilot.
package mediatek

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// Backend is MediaTek's definition.
var Backend = &backend.Backend{
	Name: "mediatek", Title: "MediaTek NeuroPilot (APU)", AppName: "neuropilot", ConfigName: "mtk", DecodesOn: "xnnpack", Rank: 40,
	FamilyRefusals: map[string]string{
		"qwen2_5": "the MediaTek runner's additive -100 attention mask leaks for Qwen2.5 (KL 0.013, 98% top-1 agreement with fp32), so it is not published",
		"gemma3":  "the MediaTek scripts expect model_type gemma3, and the Hugging Face config says gemma3_text",
		"smollm3": "the MediaTek scripts have no SmolLM3 model definition",
	},
	// A family whose script the pinned ExecuTorch lacks (LFM2's lfm2.py) is offered only where
	// internal/mtkoverlay adds it, so plan never offers what export cannot run.
	Supports: func(cfg *config.Config, src *model.Source, fam *family.Family) string {
		mp, err := family.MediaTekPlan(fam, src.Config, cfg.Export.MediaTek.MaxChunks)
		if err != nil {
			return err.Error()
		}
		ft, err := src.Config.Features()
		if err != nil { // MediaTekPlan has read them already
			return err.Error()
		}
		return mtkoverlay.Support(fam.Key, mp.Script, ft)
	},
	ExtraWindows: func(cfg *config.Config) []int { return []int{cfg.Export.MediaTek.CacheSize} },
	Estimate:     estimate,
	Describe: func(cfg *config.Config, src *model.Source, fam *family.Family) (backend.Description, error) {
		mt := cfg.Export.MediaTek
		mp, err := family.MediaTekPlan(fam, src.Config, mt.MaxChunks)
		if err != nil {
			return backend.Description{}, err
		}
		return backend.Description{
			Recipe:  fmt.Sprintf("NeuroPilot %s, %d chunks (%s)", mt.Precision, mp.Chunks, mp.Script),
			Targets: mt.SoCs, Runners: mt.Runners,
			Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true,
				Headroom: RunnerHeadroom, DiskMargin: DiskMarginBytes},
		}, nil
	},
	Gate: backend.Gate{
		Fixed: func(cfg *config.Config) (int, string) {
			return cfg.Export.MediaTek.CacheSize, "fixed by mediatek.cache_size (static NPU graphs)"
		},
		Forced:     "forced with --context (static NPU graphs; mediatek.cache_size otherwise)",
		What:       func(w int) string { return fmt.Sprintf("calibration at a %d-token cache", w) },
		DiskMargin: DiskMarginBytes,
	},
	Recipe: Build,
	Check: check.Spec{SizeError: SizeError, Backend: "mediatek", Program: func(prog *pte.Program, want check.Expect) []string {
		return Chunk(prog, want.MediaTek)
	}},
	Stages: Stages,
	Chips: &backend.Chips{Vendor: "MediaTek", Key: "export.mediatek.socs",
		List:     func(cfg *config.Config) []string { return cfg.Export.MediaTek.SoCs },
		Platform: "a MediaTek chip needs its --platform (DX3, DX4)"},
	Tools: backend.Tools{
		SourceTree: "examples/mediatek",
		MTKPython:  true,
		Dists:      []string{"transformers", "mtk_converter", "mtk-neuron"},
		// The pinned ExecuTorch's backends/mediatek/requirements.txt (config/runtime-facts.yaml,
		// mediatek.requirements), beside the SDK's wheels.
		Requires: []string{"datasets", "huggingface-hub", "safetensors", "sentencepiece", "tokenizers", "transformers", "piq", "pillow"},
		Pins: func(v config.Versions) map[string]string {
			return map[string]string{"mtk_converter": v.MTKConverter, "mtk-neuron": v.MTKNeuron}
		},
		Versions: func(v config.Versions) map[string]string {
			return map[string]string{"neuropilot_sdk": v.NeuroPilotSDKBuild, "mtk_converter": v.MTKConverter, "mtk_neuron": v.MTKNeuron}
		},
	},
	Weights: true,
	Card: backend.Card{
		Verified:  backend.StructureChecked,
		Title:     "MediaTek NeuroPilot",
		SideFiles: "MediaTek folders also hold the token embedding table the NeuroPilot runner reads from disk, shared by every window",
		KVCache:   "16-bit",
		Note: func(tc map[string]string) string {
			return fmt.Sprintf("The `mtk/` folders hold model binaries compiled with the MediaTek NeuroPilot Express SDK %s (mtk_converter %s, mtk_neuron %s) from MediaTek Inc., "+
				"used under MediaTek's license terms for that SDK. No MediaTek SDK or runtime library is included. They run on "+
				"MediaTek's LLM runner from ExecuTorch (`examples/mediatek/executor_runner`) with the device's NeuroPilot runtime.",
				tc["neuropilot_sdk"], tc["mtk_converter"], tc["mtk_neuron"])
		},
	},
}

func init() { backend.Register(Backend) }
