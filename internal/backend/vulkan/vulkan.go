// Package vulkan is the GPU backend: export_llm with the Vulkan delegate, every window. Its
// file names carry "vulkan" because the app reads the backend from the path.
package vulkan

import (
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// Backend is Vulkan's definition.
var Backend = &backend.Backend{
	Name: "vulkan", Title: "Vulkan (GPU)", AppName: "vulkan", Rank: 20,
	FamilyRefusals: map[string]string{
		"lfm2":    pinned.Say("vulkan.no-lfm2-short-conv"),
		"gemma3":  pinned.Say("export_llm.no-gemma3") + ", and " + pinned.Say("optimum.no-vulkan"),
		"smollm3": pinned.Say("export_llm.no-smollm3") + ", and " + pinned.Say("optimum.no-vulkan"),
		"qwen3_5": pinned.Say("vulkan.no-gated-deltanet"),
	},
	Pending:   exportllm.Pending,
	MaxWindow: exportllm.MaxWindow,
	Supports:  exportllm.Supports,
	Estimate:  sizes.Estimate,
	Describe:  sizes.Describe,
	Gate:      exportllm.Gate,
	Recipe: func(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
		return exportllm.Recipe{Settings: cfg.Export.Vulkan, NameTag: "vulkan", Vulkan: true, Describes: ", the Vulkan delegate"}.Build(cfg, req)
	},
	Check: check.Spec{SizeError: SizeError, Backend: "vulkan", Program: func(prog *pte.Program, _ check.Expect) []string {
		return append(check.Decoder(prog, pte.VulkanBackend, pte.SigVulkan, "forward"),
			check.RequireMetadata(prog.Metadata(), "get_max_seq_len")...)
	}},
	Stages:  exportllm.Stages,
	LLM:     true,
	Weights: true,
	Card:    backend.Card{Verified: backend.StructureChecked},
}

var sizes = exportllm.Sizes{
	Settings: func(cfg *config.Config) config.LLMRecipe { return cfg.Export.Vulkan },
	PTE:      PTEBytes,
	HostNeed: HostNeed,
}

func init() { backend.Register(Backend) }
