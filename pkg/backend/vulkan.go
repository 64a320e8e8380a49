package backend

import (
	"github.com/experimentalmachines/exe-expo/pkg/check"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/recipe"
	"github.com/experimentalmachines/exe-expo/pkg/run"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// Vulkan is the GPU backend: export_llm with the Vulkan delegate, every window. Its file
// names carry "vulkan" because the app reads the backend from the path.
var Vulkan = &Backend{
	Name: "vulkan", Title: "Vulkan (GPU)", AppName: "vulkan", Rank: 20,
	FamilyRefusals: map[string]string{
		"lfm2":    "ExecuTorch 1.4.0's Vulkan delegate has no kernel for LFM2's short convolution (the runtime segfaults at the first prefill)",
		"gemma3":  "Gemma 3 is not in ExecuTorch 1.4.0 export_llm's model list",
		"smollm3": "SmolLM3 is not in ExecuTorch 1.4.0 export_llm's model list",
	},
	Supports: llmSupports,
	Estimate: vulkanSizes.estimate,
	Describe: vulkanSizes.describe,
	Gate:     llmGate,
	Recipe: func(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
		return recipe.LLM{Recipe: cfg.Export.Vulkan, NameTag: "vulkan", Vulkan: true, Describes: ", the Vulkan delegate"}.Build(cfg, req)
	},
	Check: check.Spec{SizeError: sizing.PTEErrorVulkan, Backend: "vulkan", Program: func(prog *pte.Program, _ check.Expect) []string {
		return append(check.Decoder(prog, pte.VulkanBackend, pte.SigVulkan, "forward"),
			check.RequireMetadata(prog.Metadata(), "get_max_seq_len")...)
	}},
	Stages:  run.StagesVulkan,
	LLM:     true,
	Weights: true,
	Card:    Card{Verified: structureChecked},
}

var vulkanSizes = llmSizes{
	settings: func(cfg *config.Config) config.LLMRecipe { return cfg.Export.Vulkan },
	pte:      sizing.Model.PTEBytesVulkan,
	hostNeed: sizing.Model.HostNeedVulkan,
}

func init() { Register(Vulkan) }
