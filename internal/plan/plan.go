// Package plan answers, for one model and before any runner time is spent, what `plan`
// prints: the verdict with its reasons, and per backend and window the sizes, the phone fit,
// the host need and the runner that can build it (or why none can).
package plan

import (
	"math"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// Plan is the whole answer for one model.
type Plan struct {
	// SchemaVersion is the version of this JSON (SchemaVersion); Decode refuses another.
	SchemaVersion int    `json:"schema_version"`
	Model         string `json:"model"`
	Revision      string `json:"revision,omitempty"`
	// RevisionNote says why Revision was not checked (an offline plan).
	RevisionNote string          `json:"revision_note,omitempty"`
	Origin       string          `json:"origin"`
	Offline      bool            `json:"offline"`
	Verdict      *family.Verdict `json:"verdict"`
	Params       *model.Params   `json:"params,omitempty"`
	Arch         *ArchSummary    `json:"architecture,omitempty"`
	// ArchError says why no table could be computed.
	ArchError string `json:"architecture_error,omitempty"`
	// PhoneBudgetBytes (export.device_budget_bytes) is what a window's resident bytes are
	// held against for fits_phone_budget; PhoneOverheadBytes (export.runtime_overhead_bytes)
	// is the runtime the resident bytes add to the file and the KV cache.
	PhoneBudgetBytes   int64         `json:"phone_budget_bytes"`
	PhoneOverheadBytes int64         `json:"phone_runtime_overhead_bytes"`
	Backends           []BackendPlan `json:"backends"`
	// Layout is the repo's .pte files held against the app's list, over every backend the
	// verdict allows even when Backends shows one: each backend's workflow plans alone, and
	// all must leave the same windows out. Nil when no window is sized.
	Layout *Layout `json:"repo_layout,omitempty"`
	// Jobs, Minutes and USD sum the backends' export costs: what a run of every backend
	// shown would cost, before it is dispatched.
	Jobs    int     `json:"export_jobs"`
	Minutes int     `json:"export_minutes"`
	USD     float64 `json:"export_usd"`
}

// ArchSummary is the architecture numbers sizing used.
type ArchSummary struct {
	Layers          int64 `json:"layers"`
	AttentionLayers int64 `json:"attention_layers"`
	Heads           int64 `json:"heads"`
	KVHeads         int64 `json:"kv_heads"`
	HeadDim         int64 `json:"head_dim"`
	Dim             int64 `json:"dim"`
	Intermediate    int64 `json:"intermediate"`
	Vocab           int64 `json:"vocab"`
	Tied            bool  `json:"tied_embeddings"`
	HFRope          bool  `json:"hf_rope"`
	// SlidingLayers of the attending layers keep a ring of RingEntries over SlidingWindow
	// (Gemma 3); DeltaNetLayers keep a fixed state instead of a KV cache (Qwen3.5).
	SlidingLayers  int64 `json:"sliding_layers,omitempty"`
	SlidingWindow  int64 `json:"sliding_window,omitempty"`
	DeltaNetLayers int64 `json:"deltanet_layers,omitempty"`
}

// BackendPlan is one backend: supported with a table, or the reason it is not.
type BackendPlan struct {
	Backend string `json:"backend"`
	Title   string `json:"title"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"`
	Recipe  string `json:"recipe,omitempty"`
	// SizedAhead is true for a backend that refuses the model only because exe-expo cannot
	// drive its family's route yet (backend.Backend.SizedAhead): Rows are sized all the same,
	// but nothing is laid out, dispatched or costed.
	SizedAhead bool `json:"sized_ahead,omitempty"`
	// Targets are the chips (QNN, MediaTek); every window is built for each.
	Targets []string `json:"targets,omitempty"`
	Rows    []Row    `json:"windows,omitempty"`
	// Phones is the phone table: for each RAM class (export.phone_classes), the largest
	// window built whose resident bytes fit what the class leaves to the app.
	Phones []config.PhoneFit `json:"phones,omitempty"`
	// PhonesByCache is the phone table again with every window's KV cache kept one way
	// ("fp32", "int8"), for the export_llm backends: what a phone gains from the int8 cache.
	PhonesByCache map[string][]config.PhoneFit `json:"phones_by_kv_cache,omitempty"`
	// Fallback are the fp32 recipe's rows, for a backend whose quantized files the decision
	// gate grades: a window whose quantized file fails the gate is exported in fp32 instead
	// when the fp32 row fits the phone budget (the published SmolLM2 cards' fp32 files).
	Fallback []Row `json:"fp32_fallback,omitempty"`
	// Calibrate is the workflow's calibrate job (one per chip), for a backend calibrated once
	// per model and chip; nil where each window's job calibrates.
	Calibrate *CalibrateJob `json:"calibrate,omitempty"`
	// Jobs, Minutes and USD are what exporting every window built costs: the export jobs
	// (one per window, per chip) and the calibrate jobs, their runner minutes and price
	// (internal/cost).
	Jobs    int     `json:"export_jobs"`
	Minutes int     `json:"export_minutes"`
	USD     float64 `json:"export_usd"`
}

// CalibrateJob is one chip's calibration job: the window it calibrates at, its runner and
// the swap it adds (the window's row's), its predicted minutes and price.
type CalibrateJob struct {
	Window  int     `json:"window"`
	Runner  string  `json:"runner"`
	SwapGiB int     `json:"swap_gib"`
	Minutes int     `json:"minutes"`
	USD     float64 `json:"usd"`
}

// Row is one window of one backend.
type Row struct {
	Window int    `json:"window"`
	Label  string `json:"label"`
	// KVCache is how the window's file keeps its KV cache ("fp32", "int8"; empty for the
	// NPU backends' own 16-bit caches).
	KVCache         string `json:"kv_cache,omitempty"`
	KVBytesPerToken int64  `json:"kv_cache_bytes_per_token"`
	KVCacheBytes    int64  `json:"kv_cache_bytes"`
	// StateBytes is the fixed recurrent state beside the KV cache (Qwen3.5's DeltaNet
	// layers, fp32), in ResidentBytes; 0 for other models.
	StateBytes int64 `json:"fixed_state_bytes,omitempty"`
	PTEBytes   int64 `json:"pte_bytes_estimate"`
	// Chunks are the MediaTek chunk sizes, EmbeddingBytes its fp32 table (in PTEBytes).
	Chunks         []int64 `json:"chunk_bytes,omitempty"`
	EmbeddingBytes int64   `json:"embedding_bytes,omitempty"`
	// ResidentBytes is what the phone holds for the window: .pte, KV cache and the runtime
	// overhead; FitsPhone is ResidentBytes within the plan's PhoneBudgetBytes.
	ResidentBytes int64 `json:"device_resident_bytes"`
	FitsPhone     bool  `json:"fits_phone_budget"`
	// ResidentByCache is what the phone would hold with each way an export_llm file can
	// keep its KV cache (the same .pte and runtime, the cache fp32 or int8), so plan can
	// say what the int8 cache gains; nil for the NPU backends.
	ResidentByCache map[string]int64 `json:"device_resident_bytes_by_kv_cache,omitempty"`
	HostNeedBytes   int64            `json:"host_need_bytes"`
	// ExportPeakBytes is the raw export_llm peak (XNNPACK, Vulkan), for the export report.
	ExportPeakBytes int64  `json:"-"`
	DiskNeedBytes   int64  `json:"disk_need_bytes"`
	Runner          string `json:"runner,omitempty"`
	RunnerTier      string `json:"runner_tier,omitempty"`
	SwapGiB         int    `json:"swap_gib"`
	UsesSwap        bool   `json:"uses_swap"`
	// Skip says why the window is not built: no runner holds its export (Runner empty),
	// or its export on Runner would outlast the job limit (Runner and ExportMinutes say
	// which runner and how long). A skipped window is never dispatched nor costed.
	Skip string `json:"skip,omitempty"`
	// ExportMinutes and ExportUSD are the window's export job on Runner: the fitted time in
	// whole minutes and its price; 0 without a measurement for the backend.
	ExportMinutes int     `json:"export_minutes,omitempty"`
	ExportUSD     float64 `json:"export_usd,omitempty"`
}

// Build computes the plan of a loaded source. only, when set, limits the backends shown;
// the repo's layout (Layout) is decided over every backend first, so that each backend's
// plan alone leaves out of the repo the same windows as the plan of them all.
func Build(cfg *config.Config, src *model.Source, only string) *Plan {
	v := backend.Evaluate(cfg, src)
	p := &Plan{SchemaVersion: SchemaVersion, Model: src.ID, Revision: src.Revision, RevisionNote: src.RevisionNote, Origin: src.Origin, Verdict: v, Params: src.Params,
		PhoneBudgetBytes: cfg.Export.DeviceBudgetBytes, PhoneOverheadBytes: cfg.Export.RuntimeOverheadBytes}
	var sm *sizing.Model
	if v.Fam != nil && src.Config != nil {
		m, err := SizingModel(src, v.Fam)
		switch {
		case err == nil:
			sm = &m
			p.Arch = summarize(sm)
		case src.Params != nil:
			p.ArchError = err.Error()
		}
	}
	all := make([]BackendPlan, 0, len(v.Backends))
	for _, bv := range v.Backends {
		b := backend.ByName(bv.Backend)
		bp := BackendPlan{Backend: bv.Backend, Title: b.Title, OK: bv.OK, Reason: bv.Reason}
		bp.SizedAhead = !bv.OK && b.SizedAhead(src, v.Fam)
		if (bv.OK || bp.SizedAhead) && sm != nil {
			fillBackend(cfg, src, *sm, b, &bp)
		}
		all = append(all, bp)
	}
	twins(cfg, all)
	p.Layout = layOut(cfg, all)
	twins(cfg, all) // a decoding window the layout left out takes its NPU window with it
	for _, bp := range all {
		if only != "" && bp.Backend != only {
			continue
		}
		p.Backends = append(p.Backends, bp)
		p.Jobs, p.Minutes, p.USD = p.Jobs+bp.Jobs, p.Minutes+bp.Minutes, p.USD+bp.USD
	}
	p.USD = math.Round(p.USD*100) / 100
	return p
}

// layOut lays the backends' windows out in the one repo they share (LayOut) and, for each
// backend that lost a window, recomputes what a skipped window changes: the phone table
// and the cost. Nil when no window is sized.
func layOut(cfg *config.Config, backends []BackendPlan) *Layout {
	l := LayOut(backends, appview.MaxListed)
	if l.Planned == 0 {
		return nil
	}
	shed := map[string]bool{}
	for _, o := range l.LeftOut {
		shed[o.Backend] = true
	}
	for i := range backends {
		if shed[backends[i].Backend] {
			backends[i].tally(cfg)
		}
	}
	return &l
}

func summarize(m *sizing.Model) *ArchSummary {
	a := m.Arch
	s := &ArchSummary{
		Layers: a.Layers, AttentionLayers: a.AttentionLayers(), Heads: a.Heads, KVHeads: a.KVHeads,
		HeadDim: a.HeadDim, Dim: a.Dim, Intermediate: a.Intermediate, Vocab: a.Vocab, Tied: a.Tied, HFRope: m.HFRope,
		SlidingLayers: a.SlidingLayers(), DeltaNetLayers: a.DeltaNetLayers(),
	}
	if s.SlidingLayers > 0 {
		s.SlidingWindow = a.SlidingWindowLen
	}
	return s
}
