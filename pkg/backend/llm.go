package backend

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// What XNNPACK and Vulkan share: both are built by ExecuTorch's export_llm from one
// family plan, differ in their pipeline.yaml settings and size model, and choose the
// largest window a host can build.

// llmSupports refuses what export_llm's model cannot express for this family.
func llmSupports(_ *config.Config, src *model.Source, fam *family.Family) string {
	if _, err := family.XNNPACKPlan(fam, src.Config); err != nil {
		return err.Error()
	}
	return ""
}

// llmSizes are an export_llm backend's size formulas.
type llmSizes struct {
	settings func(cfg *config.Config) config.LLMRecipe
	pte      func(m sizing.Model, qmode string, w int) (int64, error)
	hostNeed func(m sizing.Model, w int) int64
}

func (s llmSizes) estimate(cfg *config.Config, _ *model.Source, m sizing.Model, qmode string, w int) (Size, error) {
	if qmode == "" {
		qmode = s.settings(cfg).QMode
	}
	z := Size{KVBytesPerToken: m.KVBytesPerToken(), KVCacheBytes: m.KVCacheBytes(w)}
	var err error
	z.PTEBytes, err = s.pte(m, qmode, w)
	z.HostNeedBytes = s.hostNeed(m, w)
	z.DiskNeedBytes = m.DiskNeedLLM(z.PTEBytes)
	z.ExportPeakBytes = m.ExportPeakBytes(w)
	return z, err
}

func (s llmSizes) describe(cfg *config.Config, _ *model.Source) (Description, error) {
	r := s.settings(cfg)
	return Description{Recipe: LLMRecipeLabel(r), QMode: r.QMode, Runners: r.Runners,
		Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true}}, nil
}

// LLMRecipeLabel describes an export_llm recipe in a few words.
func LLMRecipeLabel(r config.LLMRecipe) string {
	if r.QMode == "fp32" {
		return "fp32 linears, int8 embeddings"
	}
	return fmt.Sprintf("%s-g%d, int8 embeddings", r.QMode, r.GroupSize)
}

// llmGate takes the largest window that fits unless one is requested.
var llmGate = Gate{What: func(int) string { return "the export" }}

// structureChecked is what a card says of a file whose structure passed and that no host
// runtime could run.
const structureChecked = "structure checked (no host NPU runtime)"
