// Package result is the one outcome every exe-expo command can write with --result FILE:
// the exit code, its meaning, the sentence that says why, and what the command made (files,
// windows to build, windows skipped with their reasons, the repo and its page). The actions
// and the generated workflows read this file instead of parsing a command's log, so the
// CLI, the actions and the workflows cannot disagree about what happened
// (docs/results.md).
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// SchemaVersion is the version of the result this exe-expo writes and the only one it
// reads: a reader refuses another, so a change of meaning cannot pass unnoticed.
const SchemaVersion = 1

// The exit codes every command and every action shares (README.md#commands). 4 keeps the
// reference implementation's meaning of a skipped window; 130 is 128 + SIGINT, what a
// shell reports for Ctrl-C.
const (
	ExitOK          = 0
	ExitFailed      = 2
	ExitNotEligible = 3
	ExitSkipped     = 4
	ExitInterrupted = 130
)

// Outcome is the word for an exit code, so a reader need not know the numbers.
func Outcome(code int) string {
	switch code {
	case ExitOK:
		return "ok"
	case ExitNotEligible:
		return "not_eligible"
	case ExitSkipped:
		return "skipped"
	case ExitInterrupted:
		return "interrupted"
	default:
		return "failed"
	}
}

// Result is one command's outcome.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	Command       string `json:"command"`
	ExitCode      int    `json:"exit_code"`
	Outcome       string `json:"outcome"`
	// Reason is the sentence that says why the command did not succeed (empty on success).
	Reason  string  `json:"reason,omitempty"`
	Outputs Outputs `json:"outputs"`
}

// Outputs is what the command made. Lists are never null in the file, so a workflow can
// hand them to fromJSON as they are.
type Outputs struct {
	// Files are the .pte files made or checked, relative to the export folder.
	Files []string `json:"files"`
	// Report is the export report's path (export).
	Report string `json:"report,omitempty"`
	// Windows are the windows to build, each with the runner that can build it (plan).
	Windows []Window `json:"windows"`
	// Skipped are the windows not built, each with the reason.
	Skipped []Skipped `json:"skipped"`
	// SoCs are the chips each window is built for (plan, for QNN and MediaTek).
	SoCs []string `json:"socs"`
	// Calibrate is the calibrate job run once per chip before the export jobs, which load
	// its encodings (plan, QNN with calibrate_once): the window it calibrates at and the
	// runner that holds it, as a one-entry list for strategy.matrix; empty: none.
	Calibrate []Window `json:"calibrate,omitempty"`
	// Reports are the export reports whose files passed, relative to the export folder
	// (smoke and gate): what a workflow hands on to publish.
	Reports []string `json:"reports,omitempty"`
	// Failed are the windows whose file the checks refused (smoke and gate), each with the
	// file and why: what the fp32 fallback rebuilds (plan --fallback, export --fallback).
	Failed []Failed `json:"failed,omitempty"`
	// Repo and URL are the Hub repo published to and its page (publish).
	Repo string `json:"repo,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Window is one window to build: one entry of the export job's matrix.
type Window struct {
	Window  int    `json:"window"`
	Runner  string `json:"runner"`
	SwapGiB int    `json:"swap_gib"`
}

// Skipped is a window not built and why; SoC is set for a per-chip export.
type Skipped struct {
	Window int    `json:"window"`
	SoC    string `json:"soc,omitempty"`
	Reason string `json:"reason"`
}

// Failed is a window whose file a check refused. SoC is set for a per-chip export; File is
// the refused file relative to the export folder; QMode is the recipe's quantization it was
// built with.
type Failed struct {
	Window int    `json:"window"`
	SoC    string `json:"soc,omitempty"`
	File   string `json:"file"`
	QMode  string `json:"qmode,omitempty"`
	Reason string `json:"reason"`
}

// checks are the commands whose results always list reports and failed windows.
var checks = map[string]bool{"smoke": true, "gate": true}

// New is the result of command before it runs: a success until told otherwise.
func New(command string) *Result {
	return &Result{SchemaVersion: SchemaVersion, Command: command, Outcome: Outcome(ExitOK)}
}

// Finish records the exit code; a failure without a reason gets one that says so, so a
// reader never sees a failure without a sentence.
func (r *Result) Finish(code int) {
	r.ExitCode = code
	r.Outcome = Outcome(code)
	if code != ExitOK && r.Reason == "" {
		r.Reason = fmt.Sprintf("exe-expo %s exited with code %d", r.Command, code)
	}
	if code == ExitOK {
		r.Reason = ""
	}
}

func (r *Result) normalize() {
	o := &r.Outputs
	if o.Files == nil {
		o.Files = []string{}
	}
	if o.Windows == nil {
		o.Windows = []Window{}
	}
	if o.Skipped == nil {
		o.Skipped = []Skipped{}
	}
	if o.SoCs == nil {
		o.SoCs = []string{}
	}
	if checks[r.Command] && o.Reports == nil {
		o.Reports = []string{}
	}
	if checks[r.Command] && o.Failed == nil {
		o.Failed = []Failed{}
	}
}

// Write writes r to path through a temporary file and a rename, so a reader never sees
// half a result.
func Write(path string, r *Result) error {
	r.SchemaVersion = SchemaVersion
	r.normalize()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the result for %s: %w", path, err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write the result %s: %w", path, err)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the result %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the result %s: %w", path, err)
	}
	return nil
}

// VersionError is a document (a result, a plan, an export report) of a schema version this
// exe-expo does not read.
type VersionError struct {
	Name, Kind string
	Got        *int
	Want       int
}

func (e *VersionError) Error() string {
	if e.Got == nil {
		return fmt.Sprintf("%s has no schema_version, so it is not an exe-expo %s of schema %d (an older exe-expo may have written it; make it again)", e.Name, e.Kind, e.Want)
	}
	return fmt.Sprintf("%s is an exe-expo %s of schema %d, and this exe-expo reads schema %d only; use the exe-expo that wrote it, or make it again", e.Name, e.Kind, *e.Got, e.Want)
}

// Read reads a result file, refusing one of another schema version.
func Read(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the result %s: %w", path, err)
	}
	return Decode(path, b)
}

// Decode parses a result named name (for the error), refusing another schema version.
func Decode(name string, b []byte) (*Result, error) {
	var v struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s is not an exe-expo result (JSON): %w", name, err)
	}
	if err := CheckVersion(name, "result", v.SchemaVersion, SchemaVersion); err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not an exe-expo result: %w", name, err)
	}
	r.normalize()
	return &r, nil
}

// ReadChecks reads a smoke or gate result, refusing any other command's: the refused
// windows the fp32 fallback is planned and built from are listed there only.
func ReadChecks(path string) (*Result, error) {
	r, err := Read(path)
	if err != nil {
		return nil, err
	}
	if !checks[r.Command] {
		return nil, fmt.Errorf("%s is the result of exe-expo %s, not of smoke or gate, which list the refused windows", path, r.Command)
	}
	return r, nil
}

// CheckVersion refuses a document whose schema_version is missing or is not want.
func CheckVersion(name, kind string, got *int, want int) error {
	if got == nil || *got != want {
		return &VersionError{Name: name, Kind: kind, Got: got, Want: want}
	}
	return nil
}
