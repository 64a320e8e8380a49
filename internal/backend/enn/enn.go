// Package enn is Samsung Exynos: listed in every plan so that it says why nothing is
// exported to Samsung chips, and never exported until ExecuTorch ships an LLM path for it.
package enn

import (
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
)

// Backend is ENN's definition.
var Backend = &backend.Backend{
	Name: "enn", Title: "Samsung Exynos (ENN)", AppName: "enn", Rank: 50,
	Unavailable: pinned.Say("enn.no-llm"),
	Check:       check.Spec{Backend: "enn"},
}

func init() { backend.Register(Backend) }
