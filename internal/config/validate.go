package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// fieldError names the key (as a dotted path) and the line it is on.
type fieldError struct {
	line int
	path string
	msg  string
}

func (e fieldError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.line, e.path, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.path, e.msg)
}

// validator collects the first problem; checks read as a list of rules.
type validator struct {
	root *yaml.Node
	err  error
}

func (v *validator) check(ok bool, path, format string, args ...any) {
	if v.err != nil || ok {
		return
	}
	v.err = fieldError{line: lineOf(v.root, path), path: path, msg: fmt.Sprintf(format, args...)}
}

// lineOf finds the line of a dotted path ("export.xnnpack.group_size", "runners.2.label").
// It returns the line of the deepest node found, so a missing key points at its parent.
func lineOf(root *yaml.Node, path string) int {
	n := root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(path, ".") {
		if n == nil {
			break
		}
		line = n.Line
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					line = n.Content[i].Line
					next = n.Content[i+1]
				}
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return line
}

var (
	orgName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	familyToken = regexp.MustCompile(`^[a-z0-9]+$`)
	runnerLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	ghRepo      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)
	gitRef      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$`)
	embQuant    = regexp.MustCompile(`^(4|8),\d+$`)
	mtkPrec     = map[string]bool{"A16W16": true, "A16W8": true, "A16W4": true, "A8W8": true, "A8W4": true}
)

// MaxJobMinutes is GitHub Actions' own limit on one job's run time (6 hours): a job limit
// above it would let plan dispatch a window that GitHub cancels before it ends.
const MaxJobMinutes = 360

// QModes are the qmodes the XNNPACK and Vulkan recipes know, in the order messages list
// them. This is the one list: pipeline.yaml's qmode and export's override are checked
// against it, and sizing has a size model for each (its tests hold it to this list), so
// a qmode that one accepts the others can size.
func QModes() []string { return []string{"8da4w", "fp32"} }

// KnownQMode reports whether qmode is one of QModes.
func KnownQMode(qmode string) bool { return slices.Contains(QModes(), qmode) }

func (c *Config) validate(root *yaml.Node) error {
	v := &validator{root: root}
	v.check(ghRepo.MatchString(c.GitHub.Repository), "github.repository", "%q is not a GitHub owner/name", c.GitHub.Repository)
	v.check(gitRef.MatchString(c.GitHub.CallerRef), "github.caller_ref", "%q is not a branch, tag or commit name", c.GitHub.CallerRef)
	v.check(orgName.MatchString(c.Hub.Org), "hub.org", "%q is not a Hugging Face org name", c.Hub.Org)
	v.check(c.Hub.RepoSuffix == "" || runnerLabel.MatchString(strings.TrimPrefix(c.Hub.RepoSuffix, "-")), "hub.repo_suffix", "%q cannot end a repo name", c.Hub.RepoSuffix)
	v.check(runnerLabel.MatchString(c.Hub.CatalogRepo), "hub.catalog_repo", "%q is not a Hub repo name", c.Hub.CatalogRepo)
	v.check(len(c.Hub.Tags) > 0, "hub.tags", "at least one tag is needed (the openweights Android app, which loads these files, finds models by the executorch tag)")
	c.validateWatch(v)
	c.validateExport(v)
	c.validateRunners(v)
	c.validateGate(v)
	c.validateCalibration(v)
	return v.err
}

func (c *Config) validateWatch(v *validator) {
	w := c.Watch
	v.check(w.Schedule == "" || len(strings.Fields(w.Schedule)) == 5, "watch.schedule", "%q is not a cron of five fields (minute hour day month weekday)", w.Schedule)
	v.check(len(w.OrgFamilies) > 0, "watch.org_families", "no org is watched")
	orgs := make([]string, 0, len(w.OrgFamilies))
	for org := range w.OrgFamilies {
		orgs = append(orgs, org)
	}
	sort.Strings(orgs)
	for _, org := range orgs {
		p := "watch.org_families." + org
		v.check(orgName.MatchString(org), p, "%q is not a Hugging Face org name", org)
		v.check(len(w.OrgFamilies[org]) > 0, p, "lists no family")
		for _, f := range w.OrgFamilies[org] {
			v.check(familyToken.MatchString(f), p, "family token %q must be lower-case letters and digits", f)
		}
	}
	v.check(w.LimitPerOrg > 0, "watch.limit_per_org", "must be positive, not %d", w.LimitPerOrg)
	v.check(w.MaxDispatchPerRun > 0, "watch.max_dispatch_per_run", "must be positive, not %d", w.MaxDispatchPerRun)
	v.check(w.PipelineTag != "", "watch.pipeline_tag", "is empty")
	v.check(w.MaxNominalBillions > 0, "watch.max_nominal_billions", "must be positive")
	v.check(w.MaxParams > 0, "watch.max_params", "must be positive")
	for i, x := range w.NameExclude {
		v.check(x != "" && x == strings.ToLower(x), fmt.Sprintf("watch.name_exclude.%d", i), "%q must be a non-empty lower-case marker", x)
	}
}

func (c *Config) validateExport(v *validator) {
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
	v.check(len(e.PhoneClasses) > 0, "export.phone_classes", "no phone class is listed")
	for i, pc := range e.PhoneClasses {
		p := fmt.Sprintf("export.phone_classes.%d", i)
		v.check(pc.RAMGiB > 0, p+".ram_gib", "must be positive")
		v.check(pc.AppBytes > 0 && pc.AppBytes < int64(pc.RAMGiB)<<30, p+".app_bytes", "must be positive and below the class's RAM (%d GiB)", pc.RAMGiB)
		v.check(pc.ProcessLimitBytes >= 0 && pc.ProcessLimitBytes < int64(pc.RAMGiB)<<30, p+".process_limit_bytes", "must be 0 (no known limit) or positive and below the class's RAM (%d GiB)", pc.RAMGiB)
		v.check(i == 0 || pc.RAMGiB > e.PhoneClasses[i-1].RAMGiB, p+".ram_gib", "classes go from the smallest RAM up, each once")
	}
	for _, r := range []struct {
		name string
		r    LLMRecipe
	}{{"xnnpack", e.XNNPACK}, {"vulkan", e.Vulkan}} {
		p := "export." + r.name
		v.check(KnownQMode(r.r.QMode), p+".qmode", "%q has no size model (%s)", r.r.QMode, strings.Join(QModes(), " or "))
		v.check(r.r.GroupSize > 0 && r.r.GroupSize&(r.r.GroupSize-1) == 0, p+".group_size", "%d is not a power of two", r.r.GroupSize)
		v.check(embQuant.MatchString(r.r.EmbeddingQuantize), p+".embedding_quantize", "%q is not \"<bits>,<group>\" with 4 or 8 bits", r.r.EmbeddingQuantize)
		v.check(r.r.Int8KVFrom >= 0, p+".int8_kv_cache_from", "must be 0 (every cache fp32) or a window")
		v.check(!r.r.Int8KVGainsOnly || r.r.Int8KVFrom > 0, p+".int8_kv_cache_gains_only",
			"is true but int8_kv_cache_from is 0: no window keeps an int8 cache for it to choose among")
		v.check(r.name != "vulkan" || r.r.Int8KVFrom == 0, p+".int8_kv_cache_from",
			"must be 0: the pinned ExecuTorch's Vulkan export with quantize_kv_cache fails in vulkan_preprocess (GuardOnDataDependentSymNode on the RoPE table's narrow(input_pos)) once the int8 cache ops stay on the CPU (docs/research/int8-kv.md)")
		c.checkRunners(v, p+".runners", r.r.Runners)
	}
	q := e.QNN
	c.checkChips(v, "export.qnn.socs", q.SoCs)
	v.check(q.ModelMode == "hybrid" || q.ModelMode == "kv", "export.qnn.model_mode", "%q is not hybrid or kv", q.ModelMode)
	v.check(q.PrefillARLen > 0, "export.qnn.prefill_ar_len", "must be positive")
	v.check(q.MaxContextLen >= q.PrefillARLen, "export.qnn.max_context_len", "%d is below prefill_ar_len %d", q.MaxContextLen, q.PrefillARLen)
	v.check(len(q.CalibTasks) > 0, "export.qnn.calib_tasks", "no calibration task")
	v.check(q.CalibLimit > 0, "export.qnn.calib_limit", "must be positive")
	v.check(q.CalibWindow == 0 || q.CalibWindow >= q.PrefillARLen, "export.qnn.calib_window", "%d is below prefill_ar_len %d (0 calibrates every window at its own length)", q.CalibWindow, q.PrefillARLen)
	v.check(!q.CalibrateOnce || q.CalibWindow > 0, "export.qnn.calibrate_once", "needs export.qnn.calib_window: the one calibration is made at that window and every window is built from it")
	c.checkRunners(v, "export.qnn.runners", q.Runners)
	m := e.MediaTek
	c.checkChips(v, "export.mediatek.socs", m.SoCs)
	v.check(mtkPrec[m.Precision], "export.mediatek.precision", "%q is not one of A16W16, A16W8, A16W4, A8W8, A8W4", m.Precision)
	v.check(m.MaxChunks > 0, "export.mediatek.max_chunks", "must be positive")
	v.check(m.PromptTokens > 0, "export.mediatek.prompt_tokens", "must be positive")
	v.check(m.CacheSize >= m.PromptTokens, "export.mediatek.cache_size", "%d is below prompt_tokens %d", m.CacheSize, m.PromptTokens)
	v.check(m.Calibration != "", "export.mediatek.calibration", "is empty")
	v.check(m.ResponseCap > 0, "export.mediatek.response_cap", "must be positive")
	v.check(m.LongSamples >= 0, "export.mediatek.long_samples", "cannot be negative")
	c.checkRunners(v, "export.mediatek.runners", m.Runners)
	_, ok := c.Runner(e.Solve.Runner)
	v.check(ok, "export.solve.runner", "no runner is named %q", e.Solve.Runner)
	v.check(e.Solve.Damp > 0 && e.Solve.Damp < 1, "export.solve.damp", "%g is outside (0, 1)", e.Solve.Damp)
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

func (c *Config) validateRunners(v *validator) {
	names := map[string]bool{}
	for i, r := range c.Runners {
		p := fmt.Sprintf("runners.%d", i)
		v.check(runnerLabel.MatchString(r.Name), p+".name", "%q is not a runner name", r.Name)
		v.check(!names[r.Name], p+".name", "runner %q is defined twice", r.Name)
		names[r.Name] = true
		v.check(runnerLabel.MatchString(r.Label), p+".label", "%q is not a runner label", r.Label)
		v.check(r.Arch == "arm64" || r.Arch == "x64", p+".arch", "%q is not arm64 or x64", r.Arch)
		v.check(r.VCPU > 0, p+".vcpu", "must be positive")
		v.check(r.RAMBytes > c.Export.HostReserveBytes, p+".ram_bytes", "%d does not exceed the host reserve", r.RAMBytes)
		v.check(r.SwapGiB >= 0, p+".swap_gib", "cannot be negative")
		v.check(r.DiskBytes > 0, p+".disk_bytes", "must be positive")
	}
	chips := make([]string, 0, len(c.Chips))
	for name := range c.Chips {
		chips = append(chips, name)
	}
	sort.Strings(chips)
	for _, name := range chips {
		ch := c.Chips[name]
		p := "chips." + name
		checkChipBackend(v, p, ch)
		v.check(ch.Name != "", p+".name", "is empty")
		checkChipPlatform(v, p, ch)
	}
}
