// Package backend is the registry of export backends and the type each one fills in: its
// names, which models it takes and why not, its windows and size model, how export gates
// and builds it, what its programs must look like, the tools it runs, where it runs in
// Actions and what the model card says of it. Plan, export, check and inspect iterate All
// and read these values instead of switching on a backend's name.
//
// Each backend is a folder, internal/backend/<name>, holding its value and everything only it
// knows (recipe builder, size formulas and constants, log stage rules, structural check,
// tools, card words), and registering itself in init. A program links the backends it
// offers by importing them: the commands import internal/backend/all, so a new backend (Samsung
// ENN, once ExecuTorch ships an LLM path for it) is one new folder and one line there.
package backend

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/cost"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// Backend is one export backend. A backend without a Recipe (Unavailable set) is listed in
// every plan with its reason and never exported.
type Backend struct {
	// Name is how the CLI, pipeline.yaml, the output folders and reports name it.
	Name string
	// Title is how people are told of it ("XNNPACK (CPU)").
	Title string
	// AppName is the backend the app must infer from a published file's path.
	AppName string
	// ConfigName is what a folder's config.json says in "backend" ("" : Name): the first
	// segment of the folder the files are published in, because ExecuServe offers a
	// chip folder only when backend/target equals the folder (mtk/mt6991, not mediatek/…;
	// docs/research/execuserve-rules.md).
	ConfigName string
	// DecodesOn, when set, is the backend whose file of the same window decodes for this
	// one's: ExecuServe offers a MediaTek window only beside an XNNPACK window of the same
	// size (the NPU prefills, the CPU decodes), so plan leaves out a window without one.
	DecodesOn string
	// Rank orders plans, workflows and reports (ascending).
	Rank int
	// Unavailable, when set, is why nothing is exported to this backend.
	Unavailable string
	// FamilyRefusals maps a family key to why that family cannot go to this backend.
	FamilyRefusals map[string]string
	// Pending, when set, says why the family's route to this backend is not driven yet
	// ("" when it is): the backend refuses the model with it, and plan still sizes the
	// windows (SizedAhead), so the tables exist before the export does.
	Pending func(fam *family.Family) string
	// Supports applies the backend's rules to a model its family may go to: "" when it can
	// be exported, else why not. Nil means no further rule.
	Supports func(cfg *config.Config, src *model.Source, fam *family.Family) string
	// ExtraWindows adds windows to the configured context tiers (MediaTek's cache size).
	ExtraWindows func(cfg *config.Config) []int
	// MaxWindow, when set, is the largest window the backend's tool builds the model
	// faithfully at, and why (0 when every window is): Estimate refuses the windows above
	// it, so plan skips them, and export picks below it and refuses a request above it.
	MaxWindow func(src *model.Source, fam *family.Family) (int, string)
	// Estimate sizes one window; qmode overrides the recipe's where the backend takes one.
	Estimate func(cfg *config.Config, src *model.Source, m sizing.Model, qmode string, w int) (Size, error)
	// Describe is plan's recipe line, the chips and the runner tiers that may build it; fam
	// is the verdict's family (family.Verdict.Fam).
	Describe func(cfg *config.Config, src *model.Source, fam *family.Family) (Description, error)
	// Gate is how export picks and checks the window.
	Gate Gate
	// Recipe builds one export.
	Recipe recipe.Builder
	// Check is what its programs must be.
	Check check.Spec
	// Stages time its tool's log.
	Stages []run.StageRule
	// Calibration, when set, says how the backend's recipe calibrates: plan splits the
	// fitted export time by config's calibration_times with it (internal/cost), and a
	// recipe that can calibrate once per model and chip (recipe.Request.CalibrationOut)
	// builds each window from that file (recipe.Request.Calibration).
	Calibration *Calibration
	// Chips, when set, are the targets files are built for, one file set per chip.
	Chips *Chips
	// Tools is what the export runs with.
	Tools Tools
	// LLM marks an export_llm backend: it takes --qmode and GPTQ codes, ships the
	// tokenizer beside its files, keeps an fp32 KV cache (the report's per-token figure) and
	// builds the causal masks the gate warns of.
	LLM bool
	// Smoke is true when ExecuTorch's text LLM runner on an x86 host runs its files, so they
	// get a smoke run and the decision gate; the others (GPU, NPU) get the structural check.
	Smoke bool
	// Weights is true when the export reads the source's safetensors (QNN's too, for Llama
	// 3.2 whose script takes Meta's original/ checkpoint: the simulated quality figure's
	// fp32 reference loads the safetensors with transformers).
	Weights bool
	// Actions is where and how its jobs run.
	Actions Actions
	// Card is what the model card says of it.
	Card Card
}

// OverMaxWindow is the refusal of a window w above a backend's MaxWindow, most, for why.
func OverMaxWindow(w, most int, why string) string {
	return fmt.Sprintf("window %s not built, none is above %s tokens: %s", family.Commas(int64(w)), family.Commas(int64(most)), why)
}

// Size is one window's figures by the backend's size model.
type Size struct {
	// KVCache is how the file keeps its KV cache (sizing.KVFP32 or KVInt8); empty for the
	// NPU backends, whose caches are their own 16-bit ones.
	KVCache string
	// KVCaches are the caches this backend's files can keep at all (plan's phone table per
	// cache shows each); nil for the NPU backends.
	KVCaches                      []string
	KVBytesPerToken, KVCacheBytes int64
	// StateBytes is the fixed recurrent state the file keeps beside its KV cache (Qwen3.5's
	// DeltaNet layers), whatever the window; 0 for other models.
	StateBytes int64
	PTEBytes   int64
	// Chunks are per-chunk file sizes, EmbeddingBytes a side table (both in PTEBytes).
	Chunks          []int64
	EmbeddingBytes  int64
	HostNeedBytes   int64
	DiskNeedBytes   int64
	ExportPeakBytes int64
}

// Description is plan's line for a supported backend.
type Description struct {
	Recipe string
	// QMode is an export_llm recipe's quantization ("8da4w", "fp32"); empty for the others.
	QMode   string
	Targets []string
	// Runners are the runner names of the recipe in pipeline.yaml, smallest first.
	Runners []string
	Fit     sizing.Fit
}

// Gate is how export decides the window and words its checks.
type Gate struct {
	// Fixed, when set, is the window built when none is requested and why (static NPU
	// graphs); nil means the largest configured window this host can build.
	Fixed func(cfg *config.Config) (int, string)
	// Forced is the reason recorded when a window is requested for a Fixed backend.
	Forced string
	// What names the job in a gate refusal ("the export", "the Qualcomm compile").
	What func(w int) string
	// DiskMargin is what the backend keeps spare on disk beyond its estimate.
	DiskMargin int64
}

// Chips is a per-chip backend's targets.
type Chips struct {
	// Vendor names the chips' maker in messages.
	Vendor string
	// Key is where pipeline.yaml lists them.
	Key string
	// List returns the configured chips, the ones plan offers and export builds.
	List func(cfg *config.Config) []string
	// Platform, when set, is why a chip of this backend must name its platform under
	// chips in pipeline.yaml (the sentence config validation gives).
	Platform string
}

// Tools is what an export's tool needs of the host.
type Tools struct {
	// SourceTree, when set, is the folder of the ExecuTorch source tree the recipe runs
	// ("examples/mediatek"); export then requires the tree.
	SourceTree string
	// MTKPython runs the tool with the NeuroPilot tool virtualenv's python.
	MTKPython bool
	// Dists are the Python distributions whose versions the report records.
	Dists []string
	// Requires are distributions the tool imports that neither ExecuTorch's wheel nor Dists
	// bring, so setup-export installs them beside the pins.
	Requires []string
	// Pins are distributions that must match a pin (prefix), by versions.env.
	Pins func(v config.Versions) map[string]string
	// Versions are the toolchain entries the report adds beyond ExecuTorch's.
	Versions func(v config.Versions) map[string]string
}

// Actions is what the generated workflows need of a backend beyond its other fields (its
// runners come from its recipe's tiers in pipeline.yaml, its chip axis from Chips).
type Actions struct {
	// GPTQ runs the once-per-model GPTQ solve before its exports and hands them the codes
	// (the seed solved for XNNPACK only). The first such backend is the one whose recipe
	// the solve converts the checkpoint as (GPTQ).
	GPTQ bool
}

// Calibration is a backend's calibrate-once support: the encodings its recipe calibrates do
// not depend on the window, so one calibration serves every window of a model and chip.
type Calibration struct {
	// Window is the window a calibrate-only export calibrates at; 0: not configured.
	Window func(cfg *config.Config) int
	// Once says the workflow calibrates once per model and chip (its calibrate job) and
	// hands every export job the file.
	Once func(cfg *config.Config) bool
	// Model is how src's windows are calibrated, for plan's time model: the recipe's SeqMSE
	// candidates, the window it calibrates at, and whether the workflow's calibrate job
	// does it once (then plan prices that job and size-window hands it a runner).
	Model func(cfg *config.Config, src *model.Source) cost.Calibrated
}

// Card is what the model card says of a backend's files.
type Card struct {
	// Verified is what the card's check column says of a file whose structure passed.
	Verified string
	// Title is what the published cards call the backend, where it differs from Title.
	Title string
	// SideFiles introduces a window's files that are not programs (MediaTek's embedding
	// table), which the card then lists; empty when the backend writes none.
	SideFiles string
	// KVCache is how the backend's files keep their KV cache when the report does not
	// record it (the NPU backends keep their own 16-bit caches); empty means fp32, the only
	// cache export_llm files had before their recipes recorded it.
	KVCache string
	// Note is the paragraph the card's License section adds for the backend's files
	// (licence terms of vendor binaries), from the toolchain of its newest report; nil for
	// none.
	Note func(toolchain map[string]string) string
}

// StructureChecked is what a card says of a file whose structure passed and that no host
// runtime could run (the NPU and GPU backends' files).
const StructureChecked = "structure checked (no host NPU runtime)"

var registry []*Backend

// Register adds a backend; each backend's folder registers its own in init. Registering a
// name twice panics: a name picks one backend everywhere.
func Register(b *Backend) {
	if ByName(b.Name) != nil {
		panic(fmt.Sprintf("backend %q registered twice", b.Name))
	}
	registry = append(registry, b)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].Rank < registry[j].Rank })
}

// Unregister removes a backend (tests that register a made-up one clean up with it).
func Unregister(name string) {
	registry = slices.DeleteFunc(registry, func(b *Backend) bool { return b.Name == name })
}

// All lists the backends in plan order.
func All() []*Backend { return slices.Clone(registry) }

// ByName returns the backend called name, or nil.
func ByName(name string) *Backend {
	for _, b := range registry {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Names lists every backend's name, in plan order.
func Names() []string {
	var out []string
	for _, b := range registry {
		out = append(out, b.Name)
	}
	return out
}

// Exportable lists the backends export can build, in plan order.
func Exportable() []*Backend {
	var out []*Backend
	for _, b := range registry {
		if b.Recipe != nil {
			out = append(out, b)
		}
	}
	return out
}

// ExportableWhere names the exportable backends keep selects, in plan order (the LLM ones,
// the per-chip ones), for messages that list them.
func ExportableWhere(keep func(*Backend) bool) []string {
	var out []string
	for _, b := range Exportable() {
		if keep(b) {
			out = append(out, b.Name)
		}
	}
	return out
}

// LLMNames names the export_llm backends (the ones a qmode and GPTQ codes apply to).
func LLMNames() []string { return ExportableWhere(func(b *Backend) bool { return b.LLM }) }

// NamesOf lists the names of bs.
func NamesOf(bs []*Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}

// Windows lists the backend's windows, ascending and without repeats: the configured
// context tiers, plus its extra windows.
func (b *Backend) Windows(cfg *config.Config) []int {
	ws := append([]int(nil), cfg.Export.ContextTiers...)
	if b.ExtraWindows != nil {
		ws = append(ws, b.ExtraWindows(cfg)...)
	}
	sort.Ints(ws)
	return slices.Compact(ws)
}

// Support decides whether the model goes to this backend: "" if it does, else why not.
// It is the one place that decision is made; export builds only what it allows.
func (b *Backend) Support(cfg *config.Config, src *model.Source, fam *family.Family) string {
	if b.Unavailable != "" {
		return b.Unavailable
	}
	if fam == nil || src.Config == nil {
		return "no family recipe for this architecture"
	}
	if r, ok := b.FamilyRefusals[fam.Key]; ok {
		return r
	}
	if b.Pending != nil {
		if r := b.Pending(fam); r != "" {
			return r
		}
	}
	if b.Supports != nil {
		return b.Supports(cfg, src, fam)
	}
	return ""
}

// SizedAhead says whether plan sizes the model's windows on this backend although the
// backend refuses it: nothing refuses it but its route not being driven yet (Pending).
func (b *Backend) SizedAhead(src *model.Source, fam *family.Family) bool {
	if b.Unavailable != "" || fam == nil || src.Config == nil || b.Pending == nil || b.Estimate == nil {
		return false
	}
	if _, refused := b.FamilyRefusals[fam.Key]; refused {
		return false
	}
	return b.Pending(fam) != ""
}

// Rules adapts the registry to family.Evaluate, which decides model-wide eligibility and
// asks each backend about the model.
func Rules(cfg *config.Config) []family.BackendRule {
	var out []family.BackendRule
	for _, b := range registry {
		out = append(out, family.BackendRule{Name: b.Name, Support: func(src *model.Source, fam *family.Family) string {
			return b.Support(cfg, src, fam)
		}})
	}
	return out
}

// Evaluate is family.Evaluate over every registered backend.
func Evaluate(cfg *config.Config, src *model.Source) *family.Verdict {
	return family.Evaluate(cfg, src, Rules(cfg))
}

// Build builds one export's recipe with the backend named in the request.
func Build(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
	b := ByName(req.Backend)
	if b == nil || b.Recipe == nil {
		return nil, fmt.Errorf("no recipe for backend %q (%s)", req.Backend, strings.Join(NamesOf(Exportable()), ", "))
	}
	return recipe.Build(cfg, req, b.Recipe, b.AppName)
}

// GPTQ is the backend whose recipe the GPTQ solve converts the checkpoint as: the first
// exportable one that runs the solve (Actions.GPTQ); nil when none does.
func GPTQ() *Backend {
	for _, b := range Exportable() {
		if b.Actions.GPTQ {
			return b
		}
	}
	return nil
}

// Titles returns the titles of the named backends, in the order given.
func Titles(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if b := ByName(n); b != nil {
			out = append(out, b.Title)
		}
	}
	return out
}
