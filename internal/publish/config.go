package publish

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// BackendConfig is a backend folder's config.json: what the app reads to choose a window
// without opening a .pte. It is rebuilt from every report in the folder (reports sorted by
// window ascending; shared fields from the largest window's report), so it never lists a
// file the folder does not hold.
type BackendConfig struct {
	Runtime        string    `json:"runtime"`
	RuntimeVersion string    `json:"runtime_version"`
	Backend        string    `json:"backend"`
	Target         *string   `json:"target"`
	Tokenizer      string    `json:"tokenizer,omitempty"`
	SourceModel    string    `json:"source_model"`
	SourceRevision string    `json:"source_revision"`
	Variants       []Variant `json:"variants"`
	// Phones is the folder's phone table: for each phone RAM class, the largest window whose
	// resident bytes fit what the class leaves to the app (0: none).
	Phones []config.PhoneFit `json:"phones,omitempty"`
	// PhonesByCache is the same table as if every window kept one KV cache ("fp32",
	// "int8"): what a phone gains by the int8 cache. Absent when the files can keep only one.
	PhonesByCache map[string][]config.PhoneFit `json:"phones_by_kv_cache,omitempty"`
	QNNSDKVersion string                       `json:"qnn_sdk_version,omitempty"`
	NeuroPilotSDK *NeuroPilotSDK               `json:"neuropilot_sdk,omitempty"`
	// Skipped are the folder's windows that were not built, with why; the app reads only
	// variants and ignores it.
	Skipped []SkippedWindow `json:"skipped,omitempty"`
}

// NeuroPilotSDK names the SDK a MediaTek folder's files were compiled with.
type NeuroPilotSDK struct {
	Name         string `json:"name"`
	Build        string `json:"build"`
	MTKConverter string `json:"mtk_converter"`
	MTKNeuron    string `json:"mtk_neuron"`
}

// Variant is one window of the folder. A window of one program has File, SHA256 a string;
// a window cut into chunks has Files in order, Embedding, and SHA256 per file name.
type Variant struct {
	File           string   `json:"file,omitempty"`
	Files          []string `json:"files,omitempty"`
	Embedding      string   `json:"embedding,omitempty"`
	SizeBytes      int64    `json:"size_bytes"`
	SHA256         any      `json:"sha256"`
	Context        int      `json:"context"`
	SourceRevision string   `json:"source_revision"`
	Quantization   string   `json:"quantization"`
	// KVCache is how the file keeps its KV cache ("fp32" or "int8"), KVBytesPerToken what
	// the cache costs per token of the window; absent for the NPU backends' own caches.
	KVCache         string `json:"kv_cache,omitempty"`
	KVBytesPerToken *int64 `json:"kv_cache_bytes_per_token,omitempty"`
	FitsPhoneBudget *bool  `json:"fits_phone_budget"`
	// ResidentBytes is what the phone holds for the window: the files, the KV cache and the
	// runtime (the plan's estimate the export recorded).
	ResidentBytes int64 `json:"device_resident_bytes,omitempty"`
	// FitsPhonesGiB are the phone RAM classes (GiB) that can hold this window.
	FitsPhonesGiB []int `json:"fits_phones_gib,omitempty"`
	// AppKillTrapPhonesGiB are the classes on which the openweights app, whose fit is blind
	// to the window, offers this file while the phone cannot hold it (appview.KillTraps).
	AppKillTrapPhonesGiB []int `json:"app_kill_trap_phones_gib,omitempty"`
	Methods              any   `json:"methods"`
	// Quality is the variant's distance from its fp32 source (VariantQuality), null where
	// none was measured; QualityNote then says why ("not measured here: Vulkan (GPU) needs a
	// phone").
	Quality *VariantQuality `json:"quality"`
	// Coverage is how much of the file runs inside the delegate (a single program's; for a
	// window cut into chunks, summed over the chunks); null before it was recorded.
	Coverage    *VariantCoverage `json:"delegate_coverage"`
	QualityNote string           `json:"quality_note,omitempty"`
	// SimulatedQuality is the fidelity figures of the program that stood in for the file on
	// the CPU (a QNN file's QDQ program), where the file itself needs a phone; QualityNote
	// then gives them in words, labelled as simulated.
	SimulatedQuality *SimulatedQuality `json:"simulated_quality,omitempty"`
	// Fallback says why this variant is fp32: the quantized file it replaces and the
	// checks' reason for refusing it. Absent for a file built with the recipe's own
	// quantization.
	Fallback *report.Fallback `json:"fallback,omitempty"`
	// Speed is the file's measured speed, labelled with its host (VariantSpeed); absent
	// where the host's runner could not run it.
	Speed *VariantSpeed `json:"speed,omitempty"`
	// Runner is the MediaTek runner block: the export's model facts plus the file paths.
	Runner map[string]any `json:"runner,omitempty"`
}

// placed is a report with the repo path it is (or will be) published at.
type placed struct {
	Path   string
	Report *report.Report
}

func (p placed) folder() string { return path.Dir(p.Path) }

// buildConfig renders folder's config.json from its reports.
func buildConfig(reports []placed) ([]byte, error) { return folderConfig(reports, nil) }

// folderConfig renders folder's config.json from its reports and its skipped windows.
func folderConfig(reports []placed, skipped []SkippedWindow) ([]byte, error) {
	if len(reports) == 0 {
		return nil, fmt.Errorf("no export report to build config.json from")
	}
	rs := append([]placed(nil), reports...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Report.Window.Context < rs[j].Report.Window.Context })
	last := rs[len(rs)-1].Report
	c := BackendConfig{
		Runtime: "executorch", RuntimeVersion: last.Toolchain["executorch"], Backend: configBackend(last.Backend),
		Tokenizer: last.Tokenizer, SourceModel: last.Source.ID, SourceRevision: last.Source.SHA,
		QNNSDKVersion: last.Toolchain["qairt"],
	}
	if t := last.Target; t != "" && t != anyTarget {
		lt := strings.ToLower(t)
		c.Target = &lt
	}
	if b := last.Toolchain["neuropilot_sdk"]; b != "" {
		c.NeuroPilotSDK = &NeuroPilotSDK{Name: "NeuroPilot Express SDK", Build: b,
			MTKConverter: last.Toolchain["mtk_converter"], MTKNeuron: last.Toolchain["mtk_neuron"]}
	}
	for _, p := range rs {
		c.Variants = append(c.Variants, variants(p.Report)...)
	}
	c.Phones = folderPhones(rs)
	c.PhonesByCache = folderPhonesByCache(rs)
	c.Skipped = skipped
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode config.json: %w", err)
	}
	return append(b, '\n'), nil
}

// configBackend is what config.json says in "backend" for a report's backend: the name
// its folder starts with (mtk for MediaTek), so that for a chip folder backend/target is
// the folder, which is how ExecuServe finds a chip's files (docs/research/execuserve-rules.md).
func configBackend(name string) string {
	if b := backend.ByName(name); b != nil {
		return b.ConfigLabel()
	}
	return name
}

// anyTarget is the target of a file that runs on every arm64 phone.
const anyTarget = "any arm64"

// variants are a report's entries: one per program, or one for a window cut into chunks.
func variants(r *report.Report) []Variant {
	base := Variant{Context: r.Window.Context, SourceRevision: r.Source.SHA, Quantization: label(r), FitsPhonesGiB: fitsPhones(r.Window), ResidentBytes: r.Window.DeviceResident}
	base.Quality, base.QualityNote = variantQuality(r)
	base.SimulatedQuality = simulatedQuality(r)
	base.Fallback = r.Fallback
	base.Speed = variantSpeed(r)
	if base.KVCache = recordedCache(r); base.KVCache != "" {
		base.KVBytesPerToken = kvPerToken(r)
	}
	if b := backend.ByName(r.Backend); b != nil && b.LLM {
		fits := r.Window.FitsPhoneBudget
		base.FitsPhoneBudget = &fits
	}
	var ptes, side []report.File
	for _, f := range r.Files {
		if strings.HasSuffix(f.Path, ".pte") {
			ptes = append(ptes, f)
		} else {
			side = append(side, f)
		}
	}
	if len(ptes) == 1 && len(side) == 0 {
		v := base
		v.File, v.SizeBytes, v.SHA256, v.Methods = path.Base(ptes[0].Path), ptes[0].Bytes, ptes[0].SHA256, methods(r)
		v.AppKillTrapPhonesGiB = killTraps(r)
		v.Coverage = coverageOf(r, 0)
		return []Variant{v}
	}
	v := base
	shas := map[string]string{}
	for _, f := range ptes {
		v.Files = append(v.Files, path.Base(f.Path))
	}
	for _, f := range side {
		v.Embedding = path.Base(f.Path)
	}
	for _, f := range r.Files {
		v.SizeBytes += f.Bytes
		shas[path.Base(f.Path)] = f.SHA256
	}
	v.SHA256, v.Methods = shas, map[string]any{}
	v.Coverage = chunkCoverage(r)
	v.Runner = runnerBlock(r, v)
	return []Variant{v}
}

// runnerBlock completes the export's runner facts (recipe.runner) with where the runner finds
// the files: the tokenizer at the repo root, the embedding table and the chunks in order.
// A report without runner facts (an export before they were recorded) gets none.
func runnerBlock(r *report.Report, v Variant) map[string]any {
	facts, ok := r.Recipe["runner"].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]any, len(facts)+3)
	for k, val := range facts {
		out[k] = val
	}
	out["tokenizer_path"] = r.Tokenizer
	out["token_embedding_path"] = v.Embedding
	out["model_package_paths"] = v.Files
	return out
}

func label(r *report.Report) string {
	s, _ := r.Recipe["label"].(string)
	return s
}

// methods are the program's constant methods and their values, as the runner reads them.
func methods(r *report.Report) map[string]any {
	out := map[string]any{}
	for k, v := range r.Metadata {
		out[k] = v
	}
	return out
}

// chunkCoverage sums the coverage of every chunk of a window; nil when any chunk lacks it.
func chunkCoverage(r *report.Report) *VariantCoverage {
	var all []pte.Coverage
	for _, c := range r.StructuralCheck {
		if len(c.Coverage) == 0 {
			return nil
		}
		all = append(all, c.Coverage...)
	}
	if len(all) == 0 {
		return nil
	}
	return sumCoverage(all)
}
