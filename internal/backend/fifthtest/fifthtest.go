// Package fifthtest is a made-up fifth backend, npu5, for tests only. It is defined in this
// one folder like the real backends and registered by importing it, and its tests show it
// in every surface a real backend reaches: plan's rows, an export with the stand-in
// toolchain (internal/export/exporttest), the generated workflows and the model card, with no
// shared code naming it. Nothing but those tests imports it.
package fifthtest

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/backend/exportllm"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// The made-up backend's own facts: its name, its extra window, its size model (one byte a
// parameter, three times that on the host, twice on disk) and its card's words.
const (
	Name          = "npu5"
	Title         = "Made-up NPU (test)"
	CardTitle     = "Made-up NPU"
	ExtraWindow   = 3000
	BytesPerParam = 1
	Verified      = "structure checked on a made-up NPU"
	Refusal       = "npu5 has no short convolution"
)

// Backend is npu5: an export_llm backend on a made-up NPU, built on XNNPACK's pipeline.yaml
// settings and runner tiers (it has no section of its own). The stand-in toolchain writes
// what export_llm writes, an XNNPACK program, so that is what its check wants. The app
// knows no npu5: its files read as "unknown", which is what its AppName says.
var Backend = &backend.Backend{
	Name: Name, Title: Title, AppName: "unknown", Rank: 45,
	FamilyRefusals: map[string]string{"lfm2": Refusal},
	Supports:       exportllm.Supports,
	ExtraWindows:   func(*config.Config) []int { return []int{ExtraWindow} },
	Estimate: func(_ *config.Config, _ *model.Source, m sizing.Model, _ string, w int) (backend.Size, error) {
		pteBytes := sizing.MulBytes(m.Params, BytesPerParam)
		return backend.Size{KVCache: sizing.KVFP32, KVBytesPerToken: m.KVBytesPerToken(), KVCacheBytes: m.KVCacheBytes(w), PTEBytes: pteBytes,
			HostNeedBytes: 3 * pteBytes, DiskNeedBytes: 2 * pteBytes}, nil
	},
	Describe: func(cfg *config.Config, _ *model.Source, _ *family.Family) (backend.Description, error) {
		r := cfg.Export.XNNPACK
		return backend.Description{Recipe: exportllm.RecipeLabel(r) + " on a made-up NPU", QMode: r.QMode, Runners: r.Runners,
			Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true}}, nil
	},
	Gate: exportllm.Gate,
	Recipe: func(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
		return exportllm.Recipe{Settings: cfg.Export.XNNPACK, NameTag: Name, XNNPACK: true, Describes: ", a made-up NPU"}.Build(cfg, req)
	},
	Check: check.Spec{SizeError: 0.5, Backend: Name, Program: func(prog *pte.Program, _ check.Expect) []string {
		return check.Decoder(prog, pte.XnnpackBackend, pte.SigXNNPACK, "forward")
	}},
	Stages:  exportllm.Stages,
	LLM:     true,
	Weights: true,
	Card: backend.Card{Verified: Verified, Title: CardTitle, Note: func(tc map[string]string) string {
		return fmt.Sprintf("The `%s/` folders hold files for a made-up NPU, built by the test stand-in of ExecuTorch %s.", Name, tc["executorch"])
	}},
}

func init() { backend.Register(Backend) }
