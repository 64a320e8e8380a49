package plan

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

func fillBackend(cfg *config.Config, src *model.Source, fam *family.Family, m *sizing.Model, bp *BackendPlan) {
	e := cfg.Export
	reserve := e.HostReserveBytes
	switch bp.Backend {
	case "xnnpack", "vulkan":
		r := e.XNNPACK
		if bp.Backend == "vulkan" {
			r = e.Vulkan
		}
		bp.Recipe = LLMRecipeLabel(r)
		tiers := cfg.RunnersFor(r.Runners)
		for _, w := range Windows(cfg, bp.Backend) {
			row := baseRow(m, w)
			var pte int64
			var err error
			if bp.Backend == "xnnpack" {
				pte, err = m.PTEBytesXNNPACK(r.QMode, w)
				row.HostNeedBytes = m.HostNeedXNNPACK(w)
			} else {
				pte, err = m.PTEBytesVulkan(r.QMode, w)
				row.HostNeedBytes = m.HostNeedVulkan(w)
			}
			if err != nil {
				row.Skip = err.Error()
			}
			row.PTEBytes = pte
			row.ResidentBytes = pte + row.KVCacheBytes + e.RuntimeOverheadBytes
			row.DiskNeedBytes = m.DiskNeedLLM(pte)
			finish(&row, cfg, tiers, sizing.Fit{Reserve: reserve, SwapOnDisk: true})
			bp.Rows = append(bp.Rows, row)
		}
	case "qnn":
		q := e.QNN
		bp.Recipe = fmt.Sprintf("QNN HTP, ExecuTorch %s recipe (%s, prefill %d)", family.QNNDecoders[src.ID], q.ModelMode, q.PrefillARLen)
		bp.Targets = q.SoCs
		tiers := cfg.RunnersFor(q.Runners)
		for _, w := range Windows(cfg, "qnn") {
			row := baseRow(m, w)
			row.KVBytesPerToken = m.NPUKVCacheBytes(1)
			row.KVCacheBytes = m.NPUKVCacheBytes(w)
			row.PTEBytes = m.PTEBytesQNN(w)
			row.ResidentBytes = row.PTEBytes + row.KVCacheBytes + e.RuntimeOverheadBytes
			row.HostNeedBytes = m.HostNeedQNN(w)
			row.DiskNeedBytes = m.DiskNeedQNN(row.PTEBytes)
			if w < q.PrefillARLen {
				row.Skip = fmt.Sprintf("window %d is below the prefill length %d", w, q.PrefillARLen)
			}
			finish(&row, cfg, tiers, sizing.Fit{Reserve: reserve, SwapOnDisk: true})
			bp.Rows = append(bp.Rows, row)
		}
	case "mediatek":
		mt := e.MediaTek
		mp, err := family.MediaTekPlan(fam, src.Config, mt.MaxChunks)
		if err != nil {
			bp.OK, bp.Reason = false, err.Error()
			return
		}
		bp.Recipe = fmt.Sprintf("NeuroPilot %s, %d chunks (%s)", mt.Precision, mp.Chunks, mp.Script)
		bp.Targets = mt.SoCs
		tiers := cfg.RunnersFor(mt.Runners)
		for _, w := range Windows(cfg, "mediatek") {
			row := baseRow(m, w)
			row.KVBytesPerToken = m.NPUKVCacheBytes(1)
			row.KVCacheBytes = m.NPUKVCacheBytes(w)
			files, err := m.PTEBytesMediaTek(mt.Precision, mp.Chunks, w)
			if err != nil {
				row.Skip = err.Error()
			}
			row.Chunks, row.EmbeddingBytes, row.PTEBytes = files.Chunks, files.EmbeddingBytes, files.Total()
			row.ResidentBytes = row.PTEBytes + row.KVCacheBytes + e.RuntimeOverheadBytes
			need := m.MediaTekNeed(w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, mp.Streaming)
			row.HostNeedBytes = need.CalibrationBytes
			row.DiskNeedBytes = need.DiskBytes
			if w < mt.PromptTokens {
				row.Skip = fmt.Sprintf("window %d is below the %d-token prompt graph", w, mt.PromptTokens)
			}
			finish(&row, cfg, tiers, sizing.Fit{Reserve: reserve, Headroom: sizing.MTKRunnerHeadroom, DiskMargin: sizing.MTKDiskMarginBytes, SwapOnDisk: true})
			bp.Rows = append(bp.Rows, row)
		}
	}
}

func baseRow(m *sizing.Model, w int) Row {
	return Row{Window: w, Label: family.WindowLabel(w), KVBytesPerToken: m.KVBytesPerToken(), KVCacheBytes: m.KVCacheBytes(w)}
}

func finish(row *Row, cfg *config.Config, tiers []config.Runner, fit sizing.Fit) {
	row.FitsPhone = row.ResidentBytes <= cfg.Export.DeviceBudgetBytes
	if row.Skip != "" {
		return
	}
	c := sizing.PickRunner(tiers, row.HostNeedBytes, row.DiskNeedBytes, fit)
	if c.Runner == nil {
		row.Skip = c.Skip
		return
	}
	row.Runner, row.RunnerTier, row.SwapGiB, row.UsesSwap = c.Runner.Label, c.Runner.Name, c.Runner.SwapGiB, c.UsesSwap
}

// LLMRecipeLabel describes an export_llm recipe in a few words.
func LLMRecipeLabel(r config.LLMRecipe) string {
	if r.QMode == "fp32" {
		return "fp32 linears, int8 embeddings"
	}
	return fmt.Sprintf("%s-g%d, int8 embeddings", r.QMode, r.GroupSize)
}
