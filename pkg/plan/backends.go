package plan

import (
	"errors"
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// SizingModel is what sizing needs of a loaded source: its architecture, its RoPE layout
// (from the family's export_llm plan) and its parameter count.
func SizingModel(src *model.Source) (sizing.Model, error) {
	if src.Config == nil {
		return sizing.Model{}, errors.New("no config.json loaded")
	}
	fam := family.ByArchitecture(src.Config.Architectures())
	if fam == nil {
		return sizing.Model{}, fmt.Errorf("architecture %v has no family", src.Config.Architectures())
	}
	a, err := model.ArchOf(src.Config)
	if err != nil {
		return sizing.Model{}, err
	}
	if src.Params == nil {
		return sizing.Model{}, fmt.Errorf("%s: no parameter count, so it cannot be sized", src.ID)
	}
	hf := fam.Key != "llama"
	if lp, err := family.XNNPACKPlan(fam, src.Config); err == nil {
		hf = lp.HFRope
	}
	return sizing.Model{Arch: a, HFRope: hf, Params: src.Params.Total}, nil
}

// Estimate is one window of one backend as the sizing model sees it: the KV cache, the
// files, what the phone holds, and what the export needs of a host (memory, and disk
// without any margin a runner check adds). qmode overrides the XNNPACK/Vulkan recipe's.
// plan prints it per window; export's gate checks the host against it.
func Estimate(cfg *config.Config, src *model.Source, m sizing.Model, backend, qmode string, w int) (Row, error) {
	e := cfg.Export
	row := Row{Window: w, Label: family.WindowLabel(w), KVBytesPerToken: m.KVBytesPerToken(), KVCacheBytes: m.KVCacheBytes(w)}
	var err error
	switch backend {
	case "xnnpack", "vulkan":
		if qmode == "" {
			qmode = e.XNNPACK.QMode
			if backend == "vulkan" {
				qmode = e.Vulkan.QMode
			}
		}
		if backend == "xnnpack" {
			row.PTEBytes, err = m.PTEBytesXNNPACK(qmode, w)
			row.HostNeedBytes = m.HostNeedXNNPACK(w)
		} else {
			row.PTEBytes, err = m.PTEBytesVulkan(qmode, w)
			row.HostNeedBytes = m.HostNeedVulkan(w)
		}
		row.DiskNeedBytes = m.DiskNeedLLM(row.PTEBytes)
		row.ExportPeakBytes = m.ExportPeakBytes(w)
	case "qnn":
		row.KVBytesPerToken, row.KVCacheBytes = m.NPUKVCacheBytes(1), m.NPUKVCacheBytes(w)
		row.PTEBytes = m.PTEBytesQNN(w)
		row.HostNeedBytes = m.HostNeedQNN(w)
		row.DiskNeedBytes = m.DiskNeedQNN(row.PTEBytes)
		if w < e.QNN.PrefillARLen {
			err = fmt.Errorf("window %d is below the prefill length %d", w, e.QNN.PrefillARLen)
		}
	case "mediatek":
		mt := e.MediaTek
		var mp *family.MTKPlan
		if mp, err = family.MediaTekPlan(family.ByArchitecture(src.Config.Architectures()), src.Config, mt.MaxChunks); err != nil {
			return row, err
		}
		row.KVBytesPerToken, row.KVCacheBytes = m.NPUKVCacheBytes(1), m.NPUKVCacheBytes(w)
		var files sizing.MTKFiles
		files, err = m.PTEBytesMediaTek(mt.Precision, mp.Chunks, w)
		row.Chunks, row.EmbeddingBytes, row.PTEBytes = files.Chunks, files.EmbeddingBytes, files.Total()
		need := m.MediaTekNeed(w, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, mp.Streaming)
		row.HostNeedBytes, row.DiskNeedBytes = need.CalibrationBytes, need.DiskBytes
		if err == nil && w < mt.PromptTokens {
			err = fmt.Errorf("window %d is below the %d-token prompt graph", w, mt.PromptTokens)
		}
	default:
		return row, fmt.Errorf("unknown backend %q", backend)
	}
	row.ResidentBytes = sizing.AddBytes(row.PTEBytes, row.KVCacheBytes, e.RuntimeOverheadBytes)
	row.FitsPhone = row.ResidentBytes <= e.DeviceBudgetBytes
	return row, err
}

func fillBackend(cfg *config.Config, src *model.Source, m sizing.Model, bp *BackendPlan) {
	e := cfg.Export
	var runners []string
	fit := sizing.Fit{Reserve: e.HostReserveBytes, SwapOnDisk: true}
	switch bp.Backend {
	case "xnnpack", "vulkan":
		r := e.XNNPACK
		if bp.Backend == "vulkan" {
			r = e.Vulkan
		}
		bp.Recipe, runners = LLMRecipeLabel(r), r.Runners
	case "qnn":
		q := e.QNN
		bp.Recipe = fmt.Sprintf("QNN HTP, ExecuTorch %s recipe (%s, prefill %d)", family.QNNDecoders[src.ID], q.ModelMode, q.PrefillARLen)
		bp.Targets, runners = q.SoCs, q.Runners
	case "mediatek":
		mt := e.MediaTek
		mp, err := family.MediaTekPlan(family.ByArchitecture(src.Config.Architectures()), src.Config, mt.MaxChunks)
		if err != nil {
			bp.OK, bp.Reason = false, err.Error()
			return
		}
		bp.Recipe = fmt.Sprintf("NeuroPilot %s, %d chunks (%s)", mt.Precision, mp.Chunks, mp.Script)
		bp.Targets, runners = mt.SoCs, mt.Runners
		fit.Headroom, fit.DiskMargin = sizing.MTKRunnerHeadroom, sizing.MTKDiskMarginBytes
	}
	tiers := cfg.RunnersFor(runners)
	for _, w := range Windows(cfg, bp.Backend) {
		row, err := Estimate(cfg, src, m, bp.Backend, "", w)
		if err != nil {
			row.Skip = err.Error()
		} else {
			pick(&row, tiers, fit)
		}
		bp.Rows = append(bp.Rows, row)
	}
}

// pick sets the row's runner tier, or why none can build it.
func pick(row *Row, tiers []config.Runner, fit sizing.Fit) {
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
