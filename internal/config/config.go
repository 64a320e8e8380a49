// Package config holds the pipeline settings (config/pipeline.yaml) and the toolchain pins
// (config/versions.env). Both are decoded strictly so that a misspelt key fails the run that
// reads it instead of silently falling back to a default.
package config

// Config is config/pipeline.yaml plus the pins of config/versions.env.
type Config struct {
	GitHub  GitHub   `yaml:"github"`
	Hub     Hub      `yaml:"hub"`
	Watch   Watch    `yaml:"watch"`
	Export  Export   `yaml:"export"`
	Runners []Runner `yaml:"runners"`
	// ExportTimes are measured export times, from which plan costs a run (internal/cost).
	ExportTimes []ExportTime `yaml:"export_times"`
	// CalibrationTimes split a backend's fitted export time into its calibration and the
	// rest, per backend whose calibration the recipe can move (internal/cost, QNN).
	CalibrationTimes map[string]CalibrationTime `yaml:"calibration_times"`
	Chips            map[string]Chip            `yaml:"chips"`
	// Gate is the decision gate's prompts.
	Gate Gate `yaml:"gate"`
	// Calibration is the GPTQ solve's calibration rows.
	Calibration Calibration `yaml:"calibration"`
	// Speed is what a file's measured speed decides (internal/speed).
	Speed Speed `yaml:"speed"`

	// Versions comes from versions.env, not from the YAML file.
	Versions Versions `yaml:"-"`
}

// GitHub names the repository that holds the workflows and actions. A workflow another
// repository calls runs in the caller's context, so it checks this repository out by name.
type GitHub struct {
	// Repository is owner/name of this repository.
	Repository string `yaml:"repository"`
	// CallerRef is the ref a calling repository's run checks out unless it names one.
	CallerRef string `yaml:"caller_ref"`
}

// Hub names where models are published.
type Hub struct {
	Org        string   `yaml:"org"`
	RepoSuffix string   `yaml:"repo_suffix"`
	Tags       []string `yaml:"tags"`
	// CatalogRepo is the name, in Org, of the repo holding the catalog of everything
	// published (internal/catalog).
	CatalogRepo string `yaml:"catalog_repo"`
}

// Catalog is the catalog repo's id.
func (h Hub) Catalog() string { return h.Org + "/" + h.CatalogRepo }

// Watch is the watcher's filter: which orgs, which families, which names.
type Watch struct {
	OrgFamilies        map[string][]string `yaml:"org_families"`
	LimitPerOrg        int                 `yaml:"limit_per_org"`
	MaxDispatchPerRun  int                 `yaml:"max_dispatch_per_run"`
	PipelineTag        string              `yaml:"pipeline_tag"`
	MaxNominalBillions float64             `yaml:"max_nominal_billions"`
	MaxParams          int64               `yaml:"max_params"`
	NameExclude        []string            `yaml:"name_exclude"`
	// Schedule is the watcher workflow's cron (UTC); empty means it runs only by hand.
	Schedule string `yaml:"schedule"`
}

// Export holds the window tiers, the phone budget and each backend's recipe.
type Export struct {
	ContextTiers         []int `yaml:"context_tiers"`
	DeviceBudgetBytes    int64 `yaml:"device_budget_bytes"`
	RuntimeOverheadBytes int64 `yaml:"runtime_overhead_bytes"`
	PrefillChunk         int   `yaml:"prefill_chunk"`
	HostReserveBytes     int64 `yaml:"host_reserve_bytes"`
	// PhoneClasses are the handset RAM classes the phone table is given for, smallest first.
	PhoneClasses []PhoneClass `yaml:"phone_classes"`
	XNNPACK      LLMRecipe    `yaml:"xnnpack"`
	Vulkan       LLMRecipe    `yaml:"vulkan"`
	QNN          QNNRecipe    `yaml:"qnn"`
	MediaTek     MTKRecipe    `yaml:"mediatek"`
	Solve        SolveSetting `yaml:"solve"`
	// JobLimitMinutes is the longest a workflow job may run: the generated workflows' long
	// jobs take it as timeout-minutes, and plan skips a window whose fitted export time on
	// its runner is longer, since a job dispatched for it would be cancelled at the limit
	// after hours of runner time, a failure where the pipeline's rule is a skip.
	JobLimitMinutes int `yaml:"job_limit_minutes"`
}

// PhoneClass is a handset RAM class and the bytes it leaves to the app that runs the model.
// ProcessLimitBytes is a vendor's cap on one process's memory, which kills the app's
// process past it whatever the phone's RAM leaves free (the app's own measurements on 12 GB
// phones, docs/research/phone-measurements.md); 0 where no cap is known.
type PhoneClass struct {
	RAMGiB            int   `yaml:"ram_gib" json:"ram_gib"`
	AppBytes          int64 `yaml:"app_bytes" json:"app_bytes"`
	ProcessLimitBytes int64 `yaml:"process_limit_bytes" json:"process_limit_bytes,omitempty"`
}

// Budget is what the class lets one model's process hold: its share for the app, or the
// vendor's per-process limit where that is lower.
func (c PhoneClass) Budget() int64 {
	if c.ProcessLimitBytes > 0 && c.ProcessLimitBytes < c.AppBytes {
		return c.ProcessLimitBytes
	}
	return c.AppBytes
}

// LLMRecipe is the export_llm recipe shared by XNNPACK and Vulkan.
type LLMRecipe struct {
	QMode             string `yaml:"qmode"`
	GroupSize         int    `yaml:"group_size"`
	EmbeddingQuantize string `yaml:"embedding_quantize"`
	EmbeddingHQQ      bool   `yaml:"embedding_hqq"`
	// Int8KVFrom is the smallest window whose file keeps its KV cache in int8 (export_llm's
	// quantize_kv_cache); shorter windows keep it in fp32, and 0 keeps every window's in
	// fp32. KVCacheFor applies it.
	Int8KVFrom int `yaml:"int8_kv_cache_from"`
	// Int8KVGainsOnly keeps the int8 cache, from Int8KVFrom on, only for a window that some
	// phone class holds with it and not with the fp32 cache: elsewhere the fp32 cache fits
	// the same phones and decodes faster (docs/research/int8-kv.md, "Which windows").
	// Int8KVGains decides it.
	Int8KVGainsOnly bool     `yaml:"int8_kv_cache_gains_only"`
	Runners         []string `yaml:"runners"`
}

// Int8KVGains says whether the int8 cache lets more phone classes hold a window than the
// fp32 cache does, from what the phone holds with each (the file, the cache, the runtime).
func Int8KVGains(classes []PhoneClass, residentFP32, residentInt8 int64) bool {
	return len(Fits(classes, residentInt8)) > len(Fits(classes, residentFP32))
}

// KVCacheFor is how a file of this recipe at window w keeps its KV cache: "int8" from
// Int8KVFrom up, "fp32" below it, and always "fp32" for the fp32 recipe (the fallback that
// replaces a quantized file the checks refused keeps nothing quantized).
func (r LLMRecipe) KVCacheFor(qmode string, w int) string {
	if qmode == "" {
		qmode = r.QMode
	}
	if qmode == "fp32" || r.Int8KVFrom <= 0 || w < r.Int8KVFrom {
		return "fp32"
	}
	return "int8"
}

// QNNRecipe drives ExecuTorch's Qualcomm LLM script.
type QNNRecipe struct {
	SoCs          []string `yaml:"socs"`
	ModelMode     string   `yaml:"model_mode"`
	PrefillARLen  int      `yaml:"prefill_ar_len"`
	MaxContextLen int      `yaml:"max_context_len"`
	CalibTasks    []string `yaml:"calib_tasks"`
	CalibLimit    int      `yaml:"calib_limit"`
	// CalibWindow, when set, is the window every longer one is calibrated at: llama.py's
	// calibration grows faster than the window (docs/research/qnn-calibration.md), and the
	// encodings a window's graph gets from a calibration at this length match its own
	// (e2e/realtool TestQNNSharedCalibration). 0 calibrates each window at its own length, as
	// does a decoder whose recipe has no SeqMSE search (qnn.Calibration).
	CalibWindow int `yaml:"calib_window"`
	// CalibrateOnce makes the workflow calibrate once per model and chip (a calibrate job at
	// CalibWindow, exe-expo export --calibrate-only) and every window's export job build from
	// that file (--calibration): the encodings do not depend on the window, and the 2k
	// calibration is then paid once instead of once per window. Needs CalibWindow; the job
	// runs where plan has one (a recipe with a SeqMSE search).
	CalibrateOnce bool     `yaml:"calibrate_once"`
	Runners       []string `yaml:"runners"`
}

// MTKRecipe drives ExecuTorch's examples/mediatek scripts.
type MTKRecipe struct {
	SoCs                  []string `yaml:"socs"`
	Precision             string   `yaml:"precision"`
	MaxChunks             int      `yaml:"max_chunks"`
	PromptTokens          int      `yaml:"prompt_tokens"`
	CacheSize             int      `yaml:"cache_size"`
	Calibration           string   `yaml:"calibration"`
	ResponseCap           int      `yaml:"response_cap"`
	LongSamples           int      `yaml:"long_samples"`
	MinCalibrationPrompts int      `yaml:"min_calibration_prompts"`
	Runners               []string `yaml:"runners"`
}

// SolveSetting places the once-per-model GPTQ solve.
type SolveSetting struct {
	Runner string  `yaml:"runner"`
	Damp   float64 `yaml:"damp"`
}

// Runner is one runner tier as measured: the sizing compares needs against these numbers.
type Runner struct {
	Name      string `yaml:"name"`
	Label     string `yaml:"label"`
	Arch      string `yaml:"arch"`
	VCPU      int    `yaml:"vcpu"`
	RAMBytes  int64  `yaml:"ram_bytes"`
	SwapGiB   int    `yaml:"swap_gib"`
	DiskBytes int64  `yaml:"disk_bytes"`
	Measured  bool   `yaml:"measured"`
	// USDPerMinute is the runner's price per minute.
	USDPerMinute float64 `yaml:"usd_per_minute"`
}

// ExportTime is one measured export: its backend, model, window and seconds, and where the
// figure comes from. Flat marks a figure that holds for any model and window.
type ExportTime struct {
	Backend string  `yaml:"backend" json:"backend"`
	Model   string  `yaml:"model,omitempty" json:"model,omitempty"`
	Params  int64   `yaml:"params,omitempty" json:"params,omitempty"`
	Window  int     `yaml:"window,omitempty" json:"window,omitempty"`
	Seconds float64 `yaml:"seconds" json:"seconds"`
	Runner  string  `yaml:"runner,omitempty" json:"runner,omitempty"`
	Flat    bool    `yaml:"flat,omitempty" json:"flat,omitempty"`
	// Route, when set, is the tool that built the file where a backend has more than one
	// (family.Route: "optimum-executorch"); plan prices a family on its route's fit when
	// one is measured, else on the backend's.
	Route string `yaml:"route,omitempty" json:"route,omitempty"`
	// HostScale brings a time measured off the runner to the runner: runner seconds =
	// Seconds × HostScale (0 means 1, a runner's own figure). Its evidence is in Source.
	HostScale float64 `yaml:"host_scale,omitempty" json:"host_scale,omitempty"`
	// Like names another backend whose fit this one takes while none of its own exports
	// is timed (Vulkan runs export_llm as XNNPACK does, with another partitioner).
	Like   string `yaml:"like,omitempty" json:"like,omitempty"`
	Source string `yaml:"source" json:"source"`
}

// RunnerSeconds is the time on the runner: Seconds scaled by HostScale.
func (t ExportTime) RunnerSeconds() float64 {
	if t.HostScale > 0 {
		return t.Seconds * t.HostScale
	}
	return t.Seconds
}

// FitKey is the fit the measurement belongs to: the backend, or backend/route.
func (t ExportTime) FitKey() string {
	if t.Route == "" {
		return t.Backend
	}
	return t.Backend + "/" + t.Route
}

// CalibrationTime is how a backend's export time at 2k splits into the calibration loop and
// the rest, and how each part grows with the window (docs/research/qnn-calibration.md):
// measured on the recipe with RefCandidates SeqMSE candidates, whose calibration is one
// forward pass plus PassesPerCandidate forward passes per candidate.
type CalibrationTime struct {
	// Share is the calibration loop's share of the export at 2k.
	Share float64 `yaml:"share"`
	// RefCandidates is the SeqMSE candidates of the recipe Share was measured on.
	RefCandidates int `yaml:"ref_candidates"`
	// PassesPerCandidate is one SeqMSE candidate's search, in forward passes at 2k.
	PassesPerCandidate float64 `yaml:"passes_per_candidate"`
	// Growth is the calibration's exponent in the window where the recipe searches
	// (SeqMSE); ForwardGrowth the forward pass's; RestGrowth the rest's.
	Growth        float64 `yaml:"growth"`
	ForwardGrowth float64 `yaml:"forward_growth"`
	RestGrowth    float64 `yaml:"rest_growth"`
	// CompileShare is the compile's share of the rest: a job that calibrates and compiles
	// nothing (the workflow's calibrate job) runs the rest's other part.
	CompileShare float64 `yaml:"compile_share"`
	Source       string  `yaml:"source"`
}

// SwapBytes is the swap the job adds, in bytes.
func (r Runner) SwapBytes() int64 { return int64(r.SwapGiB) << 30 }

// Chip is an NPU target.
type Chip struct {
	Backend  string `yaml:"backend"`
	Name     string `yaml:"name"`
	Platform string `yaml:"platform"`
}

// Versions are the pins of config/versions.env.
type Versions struct {
	ExecuTorch          string
	ExecuTorchCommit    string
	Python              string
	QAIRT               string
	NeuroPilotSDKURL    string
	NeuroPilotSDKSHA256 string
	NeuroPilotSDKBuild  string
	MTKConverter        string
	MTKNeuron           string
	MTKPython           string

	// Torch and TorchAO are what ExecuTorch's install_requirements.py installs beside it:
	// its wheel asks only for torch>=, which would take whatever PyPI has newest.
	Torch, TorchAO string
}

// Runner returns the tier called name.
func (c *Config) Runner(name string) (Runner, bool) {
	for _, r := range c.Runners {
		if r.Name == name {
			return r, true
		}
	}
	return Runner{}, false
}

// RunnersFor resolves a recipe's runner names, in the recipe's order (smallest first).
func (c *Config) RunnersFor(names []string) []Runner {
	out := make([]Runner, 0, len(names))
	for _, n := range names {
		if r, ok := c.Runner(n); ok {
			out = append(out, r)
		}
	}
	return out
}

// RepoFor is the output repo of a source model: <org>/<name><suffix>.
func (c *Config) RepoFor(sourceName string) string {
	return c.Hub.Org + "/" + sourceName + c.Hub.RepoSuffix
}
