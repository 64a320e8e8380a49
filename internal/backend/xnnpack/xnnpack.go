// Package xnnpack is the CPU backend: any arm64 phone, every window, export_llm's 8da4w
// recipe with the XNNPACK delegate. Its files are the ones the x86 checker runs, so they get
// the smoke run and the decision gate, and the GPTQ solve is made for them.
package xnnpack

import (
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// Backend is XNNPACK's definition.
var Backend = &backend.Backend{
	Name: "xnnpack", Title: "XNNPACK (CPU)", AppName: "xnnpack", Rank: 10,
	// Gemma 3 and SmolLM3, which export_llm cannot build, take optimum-executorch's route
	// (family.RouteOptimum), which exportllm.Supports holds until exe-expo drives it.
	Pending:   exportllm.Pending,
	MaxWindow: exportllm.MaxWindow,
	Supports:  exportllm.Supports,
	Estimate:  sizes.Estimate,
	Describe:  sizes.Describe,
	Gate:      exportllm.Gate,
	Recipe: func(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
		return exportllm.Recipe{Settings: cfg.Export.XNNPACK, XNNPACK: true, Describes: ", XNNPACK with extended ops"}.Build(cfg, req)
	},
	Check: check.Spec{SizeError: SizeError, Backend: "xnnpack", Program: func(prog *pte.Program, _ check.Expect) []string {
		return append(check.Decoder(prog, pte.XnnpackBackend, pte.SigXNNPACK, "forward"),
			check.RequireMetadata(prog.Metadata(), "get_max_seq_len")...)
	}},
	Stages:  exportllm.Stages,
	LLM:     true,
	Smoke:   true,
	Weights: true,
	Actions: backend.Actions{GPTQ: true},
	// The smoke run, the gate and the solve's calibration render prompts with the model's
	// chat template and run the fp32 model through transformers.
	Tools: backend.Tools{Requires: []string{"transformers"}},
	Card:  backend.Card{Verified: "structure checked"},
}

var sizes = exportllm.Sizes{
	Settings: func(cfg *config.Config) config.LLMRecipe { return cfg.Export.XNNPACK },
	PTE:      PTEBytes,
	HostNeed: HostNeed,
	Int8KV:   true,
}

func init() { backend.Register(Backend) }
