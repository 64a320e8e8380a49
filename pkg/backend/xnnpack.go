package backend

import (
	"github.com/experimentalmachines/exe-expo/pkg/check"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/recipe"
	"github.com/experimentalmachines/exe-expo/pkg/run"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// XNNPACK is the CPU backend: any arm64 phone, every window, export_llm's 8da4w recipe.
var XNNPACK = &Backend{
	Name: "xnnpack", Title: "XNNPACK (CPU)", AppName: "xnnpack", Rank: 10,
	FamilyRefusals: map[string]string{
		"gemma3":  "Gemma 3 is not in ExecuTorch 1.4.0 export_llm's model list",
		"smollm3": "SmolLM3 is not in ExecuTorch 1.4.0 export_llm's model list",
	},
	Supports: llmSupports,
	Estimate: xnnpackSizes.estimate,
	Describe: xnnpackSizes.describe,
	Gate:     llmGate,
	Recipe: func(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
		return recipe.LLM{Recipe: cfg.Export.XNNPACK, XNNPACK: true, Describes: ", XNNPACK with extended ops"}.Build(cfg, req)
	},
	Check: check.Spec{SizeError: sizing.PTEErrorXNNPACK, Backend: "xnnpack", Program: func(prog *pte.Program, _ check.Expect) []string {
		return append(check.Decoder(prog, pte.XnnpackBackend, pte.SigXNNPACK, "forward"),
			check.RequireMetadata(prog.Metadata(), "get_max_seq_len")...)
	}},
	Stages:  run.StagesXNNPACK,
	LLM:     true,
	Smoke:   true,
	Weights: true,
	Actions: Actions{GPTQ: true},
	// The smoke run, the gate and the solve's calibration render prompts with the model's
	// chat template and run the fp32 model through transformers.
	Tools: Tools{Requires: []string{"transformers"}},
	Card:  Card{Verified: "structure checked"},
}

var xnnpackSizes = llmSizes{
	settings: func(cfg *config.Config) config.LLMRecipe { return cfg.Export.XNNPACK },
	pte:      sizing.Model.PTEBytesXNNPACK,
	hostNeed: sizing.Model.HostNeedXNNPACK,
}

func init() { Register(XNNPACK) }
