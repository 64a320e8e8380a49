// Package exportllm is what the backends ExecuTorch's export_llm builds for (XNNPACK and
// Vulkan, internal/backend/xnnpack and internal/backend/vulkan) share: its recipe builder, its log
// stage rules, the support rule of its model list, its size model's common part and its
// window gate. It registers no backend; each of those folders fills its own value with
// these and its own settings, file formulas and checks.
package exportllm

import (
	"errors"
	"fmt"
	"slices"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// Supports refuses what export_llm's model cannot express for this family; a family
// optimum-executorch builds (Gemma 3, SmolLM3) is loaded by transformers' own class, which
// the family table already matched.
func Supports(_ *config.Config, src *model.Source, fam *family.Family) string {
	if fam != nil && fam.Route.Tool == family.RouteOptimum {
		return ""
	}
	if _, err := family.XNNPACKPlan(fam, src.Config); err != nil {
		return err.Error()
	}
	return ""
}

// Pending is why an export_llm backend does not export the family yet although its route
// builds it (the backend's Pending): what exe-expo lacks to drive the route; "" when
// nothing is missing.
func Pending(fam *family.Family) string {
	if fam == nil || fam.Route.Missing == "" {
		return ""
	}
	return fmt.Sprintf("not exported yet: %s builds it, and %s", fam.Route.Label(), fam.Route.Missing)
}

// MaxWindow is the largest window the family's export_llm params build faithfully, and why
// (family.LLMPlan.MaxWindow: Phi-4-mini's LongRoPE); 0 when every window is, or when the
// plan refuses the model, which Supports says.
func MaxWindow(src *model.Source, fam *family.Family) (int, string) {
	if src == nil || src.Config == nil || fam == nil {
		return 0, ""
	}
	p, err := family.XNNPACKPlan(fam, src.Config)
	if err != nil {
		return 0, ""
	}
	return p.MaxWindow, p.WindowLimit
}

// Sizes are an export_llm backend's size formulas: its pipeline.yaml settings, its file and
// its host need.
type Sizes struct {
	Settings func(cfg *config.Config) config.LLMRecipe
	PTE      func(m sizing.Model, qmode string, w int) (int64, error)
	HostNeed func(m sizing.Model, w int) int64
	// Int8KV: the backend's runtime runs export_llm's int8 KV cache (XNNPACK's CPU
	// kernels do; Vulkan's export of it fails, docs/research/int8-kv.md).
	Int8KV bool
}

// Estimate sizes one window; qmode overrides the settings' qmode.
func (s Sizes) Estimate(cfg *config.Config, src *model.Source, m sizing.Model, qmode string, w int) (backend.Size, error) {
	rc := s.Settings(cfg)
	if qmode == "" {
		qmode = rc.QMode
	}
	pte, err := s.PTE(m, qmode, w)
	cache := rc.KVCacheFor(qmode, w)
	if !slices.Contains(m.KVCaches(), cache) {
		cache = sizing.KVFP32 // optimum-executorch's files keep an fp32 cache whatever the setting
	}
	if cache == sizing.KVInt8 && rc.Int8KVGainsOnly {
		resident := func(c string) int64 {
			return sizing.AddBytes(pte, m.KVCacheBytesAs(c, w), m.StateBytes(), cfg.Export.RuntimeOverheadBytes)
		}
		if !config.Int8KVGains(cfg.Export.PhoneClasses, resident(sizing.KVFP32), resident(sizing.KVInt8)) {
			cache = sizing.KVFP32
		}
	}
	cache = s.trapCache(cfg, m, qmode, w, pte, cache)
	z := backend.Size{KVCache: cache, KVCaches: []string{sizing.KVFP32}, KVBytesPerToken: m.KVBytesPerTokenAs(cache),
		KVCacheBytes: m.KVCacheBytesAs(cache, w), StateBytes: m.StateBytes(), PTEBytes: pte}
	if s.Int8KV && qmode != "fp32" && slices.Contains(m.KVCaches(), sizing.KVInt8) {
		z.KVCaches = append(z.KVCaches, sizing.KVInt8)
	}
	z.HostNeedBytes = s.HostNeed(m, w)
	z.DiskNeedBytes = m.DiskNeedLLM(z.PTEBytes)
	z.ExportPeakBytes = m.ExportPeakBytes(w)
	if most, why := MaxWindow(src, m.Family); err == nil && most > 0 && w > most {
		err = errors.New(backend.OverMaxWindow(w, most, why))
	}
	return z, err
}

// trapCache is the one KV-cache decision's last rule: a window below int8_kv_cache_from
// whose fp32 cache makes it a kill trap (the app, blind to the window, offers the file on a
// phone class that cannot hold it; appview.KillTraps) keeps the int8 cache where that
// removes a trap. From int8_kv_cache_from on, the gains-only rule already keeps int8 where
// it does: a trap removed is a class gained. Where nothing removes a trap (Vulkan keeps fp32
// only), config.json, appview and the card say so on the window's row.
func (s Sizes) trapCache(cfg *config.Config, m sizing.Model, qmode string, w int, pte int64, cache string) string {
	rc := s.Settings(cfg)
	if cache != sizing.KVFP32 || !s.Int8KV || qmode == "fp32" || rc.Int8KVFrom <= 0 || !slices.Contains(m.KVCaches(), sizing.KVInt8) {
		return cache
	}
	resident := func(c string) int64 {
		return sizing.AddBytes(pte, m.KVCacheBytesAs(c, w), m.StateBytes(), cfg.Export.RuntimeOverheadBytes)
	}
	classes := cfg.Export.PhoneClasses
	if len(appview.KillTraps(classes, pte, resident(sizing.KVInt8))) < len(appview.KillTraps(classes, pte, resident(sizing.KVFP32))) {
		return sizing.KVInt8
	}
	return cache
}

// Describe is plan's recipe line: the settings' recipe on their runner tiers, after the
// route that builds it when that is not export_llm (optimum-executorch for Gemma 3).
func (s Sizes) Describe(cfg *config.Config, _ *model.Source, fam *family.Family) (backend.Description, error) {
	r := s.Settings(cfg)
	label := RecipeLabel(r)
	if fam != nil && fam.Route.Tool != "" && fam.Route.Tool != family.RouteExportLLM {
		label = fam.Route.Label() + ", " + label
	}
	return backend.Description{Recipe: label, QMode: r.QMode, Runners: r.Runners,
		Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true}}, nil
}

// RecipeLabel describes an export_llm recipe in a few words.
func RecipeLabel(r config.LLMRecipe) string {
	if r.QMode == "fp32" {
		return "fp32 linears, int8 embeddings"
	}
	return fmt.Sprintf("%s-g%d, int8 embeddings", r.QMode, r.GroupSize)
}

// Gate takes the largest window that fits unless one is requested.
var Gate = backend.Gate{What: func(int) string { return "the export" }}
