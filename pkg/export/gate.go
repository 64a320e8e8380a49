package export

import (
	"fmt"
	"os"

	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/run"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// gated is the window the gate let through, with the figures the report records.
type gated struct {
	window       int
	reason       string
	model        sizing.Model
	host         run.HostFacts
	budget       int64
	need, disk   int64
	pte          int64
	resident     int64
	kvPerToken   *int64
	peakEstimate int64
}

// gate decides the window and checks, before anything heavy starts, that this host can
// build it: the sizing's host need against RAM + swap − reserve, the disk need against the
// work folder's free space.
func (o *Options) gate(src *model.Source) (*gated, error) {
	fam := family.ByArchitecture(src.Config.Architectures())
	a, err := model.ArchOf(src.Config)
	if err != nil {
		return nil, err
	}
	if src.Params == nil {
		return nil, fmt.Errorf("%s: no parameter count, so the export cannot be sized", src.ID)
	}
	hf := fam.Key != "llama"
	if p, err := family.XNNPACKPlan(fam, src.Config); err == nil {
		hf = p.HFRope
	}
	g := &gated{model: sizing.Model{Arch: a, HFRope: hf, Params: src.Params.Total}}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, fmt.Errorf("create work folder %s: %w", o.Work, err)
	}
	hostFn := o.Host
	if hostFn == nil {
		hostFn = run.Host
	}
	if g.host, err = hostFn(o.Work); err != nil {
		return nil, fmt.Errorf("read host facts: %w", err)
	}
	g.budget = g.host.MemTotalBytes + g.host.SwapTotalBytes - o.Config.Export.HostReserveBytes
	switch o.Backend {
	case "xnnpack", "vulkan":
		return g, o.gateLLM(g)
	case "qnn":
		g.window, g.reason = o.Config.Export.QNN.MaxContextLen, "fixed by qnn.max_context_len (static NPU graphs)"
		if o.Window > 0 {
			g.window, g.reason = o.Window, "forced with --context (static NPU graphs)"
		}
		g.need = g.model.HostNeedQNN(g.window)
		g.pte = g.model.PTEBytesQNN(g.window)
		g.disk = g.model.DiskNeedQNN(g.pte)
		g.resident = g.pte + g.model.NPUKVCacheBytes(g.window) + o.Config.Export.RuntimeOverheadBytes
		return g, o.check(g, "the Qualcomm compile")
	default:
		mt := o.Config.Export.MediaTek
		g.window, g.reason = mt.CacheSize, "fixed by mediatek.cache_size (static NPU graphs)"
		if o.Window > 0 {
			g.window, g.reason = o.Window, "forced with --context (static NPU graphs; mediatek.cache_size otherwise)"
		}
		mp, err := family.MediaTekPlan(fam, src.Config, mt.MaxChunks)
		if err != nil {
			return nil, err
		}
		n := g.model.MediaTekNeed(g.window, mt.ResponseCap, mt.PromptTokens, mt.LongSamples, mp.Streaming)
		g.need, g.disk = n.CalibrationBytes, n.DiskBytes+sizing.MTKDiskMarginBytes
		files, err := g.model.PTEBytesMediaTek(mt.Precision, mp.Chunks, g.window)
		if err != nil {
			return nil, err
		}
		g.pte = files.Total()
		g.resident = g.pte + g.model.NPUKVCacheBytes(g.window) + o.Config.Export.RuntimeOverheadBytes
		return g, o.check(g, fmt.Sprintf("calibration at a %d-token cache", g.window))
	}
}

func (o *Options) gateLLM(g *gated) error {
	rc := o.Config.Export.XNNPACK
	if o.Backend == "vulkan" {
		rc = o.Config.Export.Vulkan
	}
	qmode := rc.QMode
	if o.QMode != "" {
		qmode = o.QMode
	}
	size := func(w int) error {
		g.window = w
		g.need = g.model.HostNeedXNNPACK(w)
		g.pte, _ = g.model.PTEBytesXNNPACK(qmode, w)
		if o.Backend == "vulkan" {
			g.need = g.model.HostNeedVulkan(w)
			g.pte, _ = g.model.PTEBytesVulkan(qmode, w)
		}
		if _, err := sizing.LinearBytesPerParam(qmode); err != nil {
			return err
		}
		g.disk = g.model.DiskNeedLLM(g.pte)
		g.peakEstimate = g.model.ExportPeakBytes(w)
		g.resident = g.pte + g.model.KVCacheBytes(w) + o.Config.Export.RuntimeOverheadBytes
		kv := g.model.KVBytesPerToken()
		g.kvPerToken = &kv
		return nil
	}
	if o.Window > 0 {
		if err := size(o.Window); err != nil {
			return err
		}
		g.reason = fmt.Sprintf("requested window %d", o.Window)
		return o.check(g, "the export")
	}
	tiers := o.Config.Export.ContextTiers // descending
	for _, w := range tiers {
		if err := size(w); err != nil {
			return err
		}
		if o.check(g, "the export") == nil {
			g.reason = fmt.Sprintf("largest window this host can export: %d", w)
			return nil
		}
	}
	smallest := tiers[len(tiers)-1]
	size(smallest)
	return &SkipError{Reason: fmt.Sprintf("no window fits: at %d tokens the phone would hold %s and the export would need about %s, this host has %s (RAM + swap − reserve)",
		smallest, sizing.GB(g.resident), sizing.GiB(g.need), sizing.GiB(g.budget))}
}

// check compares the need with the host and the disk need with the work folder's space.
func (o *Options) check(g *gated, what string) error {
	if g.need > g.budget {
		msg := fmt.Sprintf("%s at %d tokens needs about %s of memory, this host has %s (RAM %s + swap %s − %s reserve)",
			what, g.window, sizing.GiB(g.need), sizing.GiB(g.budget), sizing.GiB(g.host.MemTotalBytes), sizing.GiB(g.host.SwapTotalBytes), sizing.GiB(o.Config.Export.HostReserveBytes))
		if masks := g.model.MaskBytes(g.window); (o.Backend == "xnnpack" || o.Backend == "vulkan") && masks > g.budget/2 {
			msg += fmt.Sprintf("; the causal masks alone take %s", sizing.GiB(masks))
		}
		return &SkipError{Reason: msg}
	}
	if g.host.DiskFreeBytes > 0 && g.disk > g.host.DiskFreeBytes {
		return &SkipError{Reason: fmt.Sprintf("%s at %d tokens needs about %s of disk, %s has %s free",
			what, g.window, sizing.GB(g.disk), g.host.DiskPath, sizing.GB(g.host.DiskFreeBytes))}
	}
	return nil
}
