package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// validateExport checks the export section and the time and runner tables plan prices
// exports with, one idea at a time, in the order the messages are listed.
func (c *Config) validateExport(v *validator) {
	c.validateWindows(v)
	c.validateTimes(v)
	c.validatePhoneClasses(v)
	c.validateLLMRecipes(v)
	c.validateQNN(v)
	c.validateMediaTek(v)
	c.validateSolve(v)
}

// validateWindows checks the context tiers and the memory and time budgets every window is
// sized and gated against.
func (c *Config) validateWindows(v *validator) {
	e := c.Export
	v.check(len(e.ContextTiers) > 0, "export.context_tiers", "no window is listed")
	seen := map[int]bool{}
	for i, w := range e.ContextTiers {
		p := fmt.Sprintf("export.context_tiers.%d", i)
		v.check(w >= 128 && w <= 1<<20, p, "window %d is outside 128..1048576 tokens", w)
		v.check(!seen[w], p, "window %d is listed twice", w)
		seen[w] = true
	}
	v.check(e.DeviceBudgetBytes > 0, "export.device_budget_bytes", "must be positive")
	v.check(e.RuntimeOverheadBytes >= 0, "export.runtime_overhead_bytes", "cannot be negative")
	v.check(e.PrefillChunk > 0, "export.prefill_chunk", "must be positive")
	v.check(e.HostReserveBytes >= 0, "export.host_reserve_bytes", "cannot be negative")
	v.check(e.JobLimitMinutes > 0 && e.JobLimitMinutes <= MaxJobMinutes, "export.job_limit_minutes",
		"%d is outside 1..%d (GitHub cancels a job after %d minutes)", e.JobLimitMinutes, MaxJobMinutes, MaxJobMinutes)
}

// validateTimes checks the measured export and calibration times and the runners' prices
// plan's time and cost model reads.
func (c *Config) validateTimes(v *validator) {
	c.validateExportTimes(v)
	for _, b := range slices.Sorted(maps.Keys(c.CalibrationTimes)) {
		ct, p := c.CalibrationTimes[b], "calibration_times."+b
		v.check(ct.Share > 0 && ct.Share < 1, p+".share", "%g is not a share between 0 and 1", ct.Share)
		v.check(ct.CompileShare >= 0 && ct.CompileShare < 1, p+".compile_share", "%g is not a share between 0 and 1", ct.CompileShare)
		v.check(ct.RefCandidates >= 0, p+".ref_candidates", "cannot be negative")
		v.check(ct.PassesPerCandidate >= 0, p+".passes_per_candidate", "cannot be negative")
		v.check(ct.Growth >= 0 && ct.ForwardGrowth >= 0 && ct.RestGrowth >= 0, p, "a growth exponent cannot be negative")
		v.check(ct.Source != "", p+".source", "say where the figures come from")
	}
	for i, r := range c.Runners {
		v.check(r.USDPerMinute >= 0, fmt.Sprintf("runners.%d.usd_per_minute", i), "cannot be negative")
	}
}

// validatePhoneClasses checks the phone classes plan's fit table is drawn for: each below
// its RAM, smallest first.
func (c *Config) validatePhoneClasses(v *validator) {
	e := c.Export
	v.check(len(e.PhoneClasses) > 0, "export.phone_classes", "no phone class is listed")
	for i, pc := range e.PhoneClasses {
		p := fmt.Sprintf("export.phone_classes.%d", i)
		v.check(pc.RAMGiB > 0, p+".ram_gib", "must be positive")
		v.check(pc.AppBytes > 0 && pc.AppBytes < int64(pc.RAMGiB)<<30, p+".app_bytes", "must be positive and below the class's RAM (%d GiB)", pc.RAMGiB)
		v.check(pc.ProcessLimitBytes >= 0 && pc.ProcessLimitBytes < int64(pc.RAMGiB)<<30, p+".process_limit_bytes", "must be 0 (no known limit) or positive and below the class's RAM (%d GiB)", pc.RAMGiB)
		v.check(i == 0 || pc.RAMGiB > e.PhoneClasses[i-1].RAMGiB, p+".ram_gib", "classes go from the smallest RAM up, each once")
	}
}

// vulkanInt8KV is why the Vulkan recipe keeps every cache fp32.
const vulkanInt8KV = "the pinned ExecuTorch's Vulkan export with quantize_kv_cache fails in vulkan_preprocess (GuardOnDataDependentSymNode on the RoPE table's narrow(input_pos)) once the int8 cache ops stay on the CPU (docs/research/int8-kv.md)"

// validateLLMRecipes checks the export_llm recipes (XNNPACK's and Vulkan's sections); noInt8KV,
// when set, is why a recipe cannot keep an int8 KV cache at any window.
func (c *Config) validateLLMRecipes(v *validator) {
	e := c.Export
	for _, r := range []struct {
		name     string
		r        LLMRecipe
		noInt8KV string
	}{{"xnnpack", e.XNNPACK, ""}, {"vulkan", e.Vulkan, vulkanInt8KV}} {
		p := "export." + r.name
		v.check(KnownQMode(r.r.QMode), p+".qmode", "%q has no size model (%s)", r.r.QMode, strings.Join(QModes(), " or "))
		v.check(r.r.GroupSize > 0 && r.r.GroupSize&(r.r.GroupSize-1) == 0, p+".group_size", "%d is not a power of two", r.r.GroupSize)
		v.check(embQuant.MatchString(r.r.EmbeddingQuantize), p+".embedding_quantize", "%q is not \"<bits>,<group>\" with 4 or 8 bits", r.r.EmbeddingQuantize)
		v.check(r.r.Int8KVFrom >= 0, p+".int8_kv_cache_from", "must be 0 (every cache fp32) or a window")
		v.check(!r.r.Int8KVGainsOnly || r.r.Int8KVFrom > 0, p+".int8_kv_cache_gains_only",
			"is true but int8_kv_cache_from is 0: no window keeps an int8 cache for it to choose among")
		v.check(r.noInt8KV == "" || r.r.Int8KVFrom == 0, p+".int8_kv_cache_from", "must be 0: %s", r.noInt8KV)
		c.checkRunners(v, p+".runners", r.r.Runners)
	}
}

// validateQNN checks the Qualcomm recipe: its chips, graph shape and calibration.
func (c *Config) validateQNN(v *validator) {
	q := c.Export.QNN
	c.checkChips(v, "export.qnn.socs", q.SoCs)
	v.check(q.ModelMode == "hybrid" || q.ModelMode == "kv", "export.qnn.model_mode", "%q is not hybrid or kv", q.ModelMode)
	v.check(q.PrefillARLen > 0, "export.qnn.prefill_ar_len", "must be positive")
	v.check(q.MaxContextLen >= q.PrefillARLen, "export.qnn.max_context_len", "%d is below prefill_ar_len %d", q.MaxContextLen, q.PrefillARLen)
	v.check(len(q.CalibTasks) > 0, "export.qnn.calib_tasks", "no calibration task")
	v.check(q.CalibLimit > 0, "export.qnn.calib_limit", "must be positive")
	v.check(q.CalibWindow == 0 || q.CalibWindow >= q.PrefillARLen, "export.qnn.calib_window", "%d is below prefill_ar_len %d (0 calibrates every window at its own length)", q.CalibWindow, q.PrefillARLen)
	v.check(!q.CalibrateOnce || q.CalibWindow > 0, "export.qnn.calibrate_once", "needs export.qnn.calib_window: the one calibration is made at that window and every window is built from it")
	c.checkRunners(v, "export.qnn.runners", q.Runners)
}

// validateMediaTek checks the MediaTek recipe: its chips, precision, chunks, cache and
// calibration prompts.
func (c *Config) validateMediaTek(v *validator) {
	m := c.Export.MediaTek
	c.checkChips(v, "export.mediatek.socs", m.SoCs)
	v.check(mtkPrec[m.Precision], "export.mediatek.precision", "%q is not one of A16W16, A16W8, A16W4, A8W8, A8W4", m.Precision)
	v.check(m.MaxChunks > 0, "export.mediatek.max_chunks", "must be positive")
	v.check(m.PromptTokens > 0, "export.mediatek.prompt_tokens", "must be positive")
	v.check(m.CacheSize >= m.PromptTokens, "export.mediatek.cache_size", "%d is below prompt_tokens %d", m.CacheSize, m.PromptTokens)
	v.check(m.Calibration != "", "export.mediatek.calibration", "is empty")
	v.check(m.ResponseCap > 0, "export.mediatek.response_cap", "must be positive")
	v.check(m.LongSamples >= 0, "export.mediatek.long_samples", "cannot be negative")
	c.checkRunners(v, "export.mediatek.runners", m.Runners)
}

// validateSolve checks the GPTQ solve's runner and damping.
func (c *Config) validateSolve(v *validator) {
	s := c.Export.Solve
	_, ok := c.Runner(s.Runner)
	v.check(ok, "export.solve.runner", "no runner is named %q", s.Runner)
	v.check(s.Damp > 0 && s.Damp < 1, "export.solve.damp", "%g is outside (0, 1)", s.Damp)
}

func (c *Config) checkRunners(v *validator, path string, names []string) {
	v.check(len(names) > 0, path, "no runner is listed")
	var prev int64
	for i, n := range names {
		p := fmt.Sprintf("%s.%d", path, i)
		r, ok := c.Runner(n)
		v.check(ok, p, "no runner is named %q", n)
		v.check(!ok || r.RAMBytes >= prev, p, "runners must be listed smallest first: %s has less RAM than the one before", n)
		prev = r.RAMBytes
	}
}
