// Package report is the export report (export-report-<window>.json): the one record every
// later step (verify, publish, the model card) reads. It is written atomically, so a
// crashed export never leaves half a report behind for publish to trust.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
	"github.com/experimentalmachines/exe-expo/internal/speed"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// SchemaVersion is the version of the export report's JSON this exe-expo writes and reads
// (docs/results.md).
const SchemaVersion = 1

// Report mirrors the reference implementation's export report
// (docs/research/reference.md#export-report), with the run's stage timings added.
type Report struct {
	// SchemaVersion is the version of the report's JSON (SchemaVersion): Write stamps it
	// and Read refuses another, so a report of another meaning is never published as this.
	SchemaVersion int               `json:"schema_version"`
	Backend       string            `json:"backend"`
	Target        string            `json:"target"`
	TargetName    string            `json:"target_name,omitempty"`
	Tokenizer     string            `json:"tokenizer,omitempty"`
	OutputRepo    string            `json:"output_repo"`
	Source        Source            `json:"source"`
	Toolchain     map[string]string `json:"toolchain"`
	Recipe        map[string]any    `json:"recipe"`
	Window        Window            `json:"window"`
	Estimates     Estimates         `json:"estimates"`
	Conversion    *Conversion       `json:"conversion,omitempty"`
	Inputs        *Inputs           `json:"inputs,omitempty"`
	Files         []File            `json:"files"`
	// RootFiles are the files the export put at the root of the output folder for the repo
	// root (the tokenizer, the upstream license files), hashed as Files are, so publish
	// sends only what the export copied.
	RootFiles []File       `json:"root_files,omitempty"`
	Host      Host         `json:"host"`
	Metadata  pte.Metadata `json:"metadata"`
	// StructuralCheck is check.Structural's verdict on each .pte, in Files order: what the
	// file says about itself against the request. It is not a smoke run (nothing is
	// generated); a smoke run has its own field, Smoke.
	StructuralCheck []check.Result `json:"structural_check"`
	// SizeCheck, Smoke and Gate are the checks before publish (docs/research/checks.md),
	// absent until run: the files' bytes against the estimate, the runner's reply
	// (XNNPACK), and the decision gate against fp32.
	SizeCheck *check.SizeResult `json:"size_check,omitempty"`
	Smoke     *smoke.Result     `json:"smoke,omitempty"`
	Gate      *gate.Result      `json:"gate,omitempty"`
	// Speed is how fast the file ran through the runner, on which host (the export host,
	// never a phone), and whether it prefills one token a call; absent until measured, and
	// for a backend the host's runner cannot run.
	Speed  *speed.Result `json:"speed,omitempty"`
	Stages []StageReport `json:"stages"`
	Run    *Run          `json:"run,omitempty"`
	// Quality is how far the file is from its fp32 source in one block
	// (docs/research/quality.md): the gate's figures (graded rows, agreement, fp32 and
	// export means, shortfall, quiet rows) and, over the fidelity text, next-token agreement
	// and mean KL(fp32 || export) — a lower bound of the full KL, computed over fp32's top-k
	// tokens and the rest. A file whose backend the x86 runner cannot run has no figures and
	// says so (not_measured). Absent until the gate ran.
	Quality *gate.Quality `json:"quality,omitempty"`
	// Fallback says why this file is fp32: the window's quantized file failed the checks,
	// and the workflow rebuilt it unquantized (export --fallback). Absent otherwise.
	Fallback *Fallback `json:"fallback,omitempty"`
}

// Fallback is the quantized file an fp32 file replaces, and why it was refused; the card
// and config.json say it beside the file.
type Fallback struct {
	// Replaces is the refused file, relative to the export folder; QMode its quantization.
	Replaces string `json:"replaces"`
	QMode    string `json:"qmode,omitempty"`
	Reason   string `json:"reason"`
}

// Source describes the model the files were exported from.
type Source struct {
	ID           string   `json:"id"`
	SHA          string   `json:"sha,omitempty"`
	Revision     string   `json:"revision,omitempty"`
	CreatedAt    string   `json:"created_at,omitempty"`
	TotalParams  int64    `json:"total_params"`
	Family       string   `json:"family"`
	Variant      string   `json:"variant"`
	License      License  `json:"license"`
	LicenseFiles []string `json:"license_files"`
}

// License is the model card's license fields.
type License struct {
	License     string `json:"license,omitempty"`
	LicenseName string `json:"license_name,omitempty"`
	LicenseLink string `json:"license_link,omitempty"`
}

// Window records which window was built and what it costs on the phone.
type Window struct {
	Context          int    `json:"context"`
	Reason           string `json:"reason"`
	KVBytesPerToken  *int64 `json:"kv_cache_bytes_per_token"`
	DeviceResident   int64  `json:"device_resident_bytes"`
	PhoneBudgetBytes int64  `json:"phone_budget_bytes"`
	FitsPhoneBudget  bool   `json:"fits_phone_budget"`
	// PhoneClasses are the handset RAM classes the window was held against
	// (export.phone_classes), and FitsPhonesGiB the RAM of those whose share for the app
	// holds DeviceResident: what the card's phone table and config.json are built from.
	PhoneClasses  []config.PhoneClass `json:"phone_classes,omitempty"`
	FitsPhonesGiB []int               `json:"fits_phones_gib"`
	// ResidentByCache is what the phone would hold with each KV cache an export_llm file of
	// this window can keep (plan's figure): the card and config.json show from it what a
	// phone gains by the int8 cache. Empty for the NPU backends.
	ResidentByCache map[string]int64 `json:"device_resident_bytes_by_kv_cache,omitempty"`
}

// Estimates are the sizing model's predictions, next to what was measured.
type Estimates struct {
	PTEBytesEstimate        int64 `json:"pte_bytes_estimate"`
	PTEBytesActual          int64 `json:"pte_bytes_actual"`
	ExportPeakBytesEstimate int64 `json:"export_peak_bytes_estimate,omitempty"`
	HostNeedBytes           int64 `json:"host_need_bytes"`
	DiskNeedBytes           int64 `json:"disk_need_bytes"`
}

// Conversion is what the checkpoint conversion did.
type Conversion struct {
	Tensors        int            `json:"tensors"`
	TiedEmbeddings bool           `json:"tied_embeddings"`
	Dtypes         map[string]int `json:"dtypes"`
}

// Inputs is what a tool loaded by itself rather than from exe-expo's converted checkpoint
// (QNN: the Qualcomm script's model files and calibration rows), as the tool's launcher
// recorded it, so the report can say which revision and which data the file was built from.
type Inputs struct {
	// Model is the Hub id the tool loaded; Revision the commit its files were downloaded at
	// (empty for a local folder).
	Model    string      `json:"model"`
	Revision string      `json:"revision,omitempty"`
	Read     []InputFile `json:"read"`
	// Calibration is the data the tool calibrated its quantization on.
	Calibration Calibration `json:"calibration"`
	// CalibrationFile, when set, says the tool calibrated nothing: the encodings came from
	// this file (export --calibration), and Calibration is what the file was calibrated on.
	CalibrationFile *CalibrationFile `json:"calibration_file,omitempty"`
}

// CalibrationFile is a saved calibration an export was built from.
type CalibrationFile struct {
	// Path is the file's name as the export was given it.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Window is the window it was calibrated at; ExecuTorch the release that made it.
	Window     int    `json:"window"`
	ExecuTorch string `json:"executorch"`
	// KeptConstants are the graph's own constants kept because their shape differs from
	// the file's (the RoPE tables, a row per position).
	KeptConstants []string `json:"kept_constants"`
}

// InputFile is one model file (or folder) a tool read.
type InputFile struct {
	// What is "checkpoint", "tokenizer" or "params".
	What string `json:"what"`
	// Path is relative to the downloaded source ("." for the whole folder, which the tool
	// asked the Hub for and was served), or absolute outside it (ExecuTorch's params).
	Path string `json:"path"`
}

// Calibration is what a calibrating tool ran on: the tasks asked for, the datasets they
// loaded, and a digest of the token rows themselves, so two exports whose digests agree
// calibrated on the same tokens whatever the Hub served.
type Calibration struct {
	Tasks        []string             `json:"tasks"`
	Limit        int                  `json:"limit"`
	NumFewshot   *int                 `json:"num_fewshot"`
	Sequences    int                  `json:"sequences"`
	Tokens       int                  `json:"tokens"`
	TokensSHA256 string               `json:"tokens_sha256"`
	Datasets     []CalibrationDataset `json:"datasets"`
}

// CalibrationDataset is one dataset load during calibration.
type CalibrationDataset struct {
	Path string `json:"path"`
	Name string `json:"name,omitempty"`
	// Revision is the revision asked for; null means none, so the Hub's default branch as
	// of the export (lm_eval 0.4.5's tasks pin none).
	Revision *string `json:"revision"`
	// Splits are the loaded splits' row counts and the datasets library's fingerprints.
	Splits map[string]CalibrationSplit `json:"splits"`
}

// CalibrationSplit is one split of a calibration dataset.
type CalibrationSplit struct {
	Rows        int    `json:"rows"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// File is one published file, hashed once.
type File struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Host is the machine and what the export cost it.
type Host struct {
	run.HostFacts
	run.Memory
	PeakRSSConvertBytes int64   `json:"peak_rss_convert_bytes"`
	PeakRSSExportBytes  int64   `json:"peak_rss_export_bytes"`
	ConvertSeconds      float64 `json:"convert_seconds"`
	ExportSeconds       float64 `json:"export_seconds"`
	TotalSeconds        float64 `json:"total_seconds"`
	// RunnerLabel is the runner the export job ran on ($EXE_EXPO_RUNNER, which the
	// generated workflows set to the plan's pick), for `exe-expo costs`.
	RunnerLabel string `json:"runner_label,omitempty"`
}

// StageReport is one stage of a tool's run.
type StageReport struct {
	Tool    string      `json:"tool"`
	Timings run.Timings `json:"timings"`
}

// Run links the report to the workflow run that built it.
type Run struct {
	URL string `json:"url"`
	ID  string `json:"id"`
}

// Name is the report's file name for a window label.
func Name(label string) string { return "export-report-" + label + ".json" }

// Write stores r at path atomically: a temporary file in the same folder, synced, then
// renamed over the target.
func Write(path string, r *Report) error {
	r.SchemaVersion = SchemaVersion
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report %s: %w", path, err)
	}
	return WriteAtomic(path, append(b, '\n'))
}

// WriteAtomic writes data to path through a temporary file and a rename.
func WriteAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return FileError("create", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return FileError("write", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return FileError("write", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return FileError("sync", path, err)
	}
	if err := tmp.Close(); err != nil {
		return FileError("write", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return FileError("rename a temporary file onto", path, err)
	}
	return nil
}

// Read loads a report.
func Read(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, FileError("read", path, err)
	}
	var v struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s is not an export report: %s", path, fileutil.Reason(err))
	}
	if err := result.CheckVersion(path, "export report", v.SchemaVersion, SchemaVersion); err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not an export report: %s", path, fileutil.Reason(err))
	}
	return &r, nil
}

// FileError words a failed file operation as one sentence; the wording is
// fileutil.Error's, kept under this name for the packages that report export failures.
func FileError(op, path string, err error) error { return fileutil.Error(op, path, err) }

// Reason is what went wrong in a file operation, without the operation and the path; the
// rule is fileutil.Reason's.
func Reason(err error) string { return fileutil.Reason(err) }
