// Package handoff decides what a generated workflow's check step hands on once smoke (and
// the gate) ran over an export folder: the files that passed and the reports publish
// keeps, every window skipped with its reason (the plan's, the exports', an earlier job's),
// and the windows whose quantized file the gate refused, which go to the fp32 fallback.
// The workflows used to derive this in shell with jq; here it is one function with tests,
// and the templates only wire its outputs (docs/results.md).
package handoff

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// Input is what the check step knows when its checks are over.
type Input struct {
	// Checks are the results the step's checks wrote, in the order they ran (smoke, then
	// the gate); a check the step did not run has none.
	Checks []*result.Result
	// Status is the exit status of the step's last check as the shell saw it: 0 when none
	// ran. It is held against the last result, so a check that died before writing its
	// result cannot pass for the one before it.
	Status int
	// Exported says the export folder holds files, so some check must have run.
	Exported bool
	// Before are the windows skipped before these checks (the plan's, an earlier job's),
	// in the order the workflow lists them; the checks' own skipped windows follow.
	Before []result.Skipped
	// Files are the files an earlier job checked: the fp32 fallback's check hands them on
	// with its own.
	Files []string
	// Fallback says a window the gate refused is rebuilt in fp32 by the workflow's
	// fallback jobs: the workflow has them and the recipe quantizes.
	Fallback bool
}

// Handoff is what the step hands on.
type Handoff struct {
	// Code is the step's exit code: the last check's, or 0 when every file it refused
	// goes to the fp32 fallback.
	Code int
	// Reason is why the step fails (empty when Code is 0).
	Reason string
	// Checked are this step's files that passed; Files adds them to Input.Files.
	Checked, Files []string
	// Reports are the export reports whose files passed, relative to the export folder:
	// what publish reads.
	Reports []string
	// Skipped is every window not built, with its reason.
	Skipped []result.Skipped
	// Failed are the windows the fp32 fallback rebuilds, with the file the gate refused.
	Failed []result.Failed
	// FallbackFrom is the gate result the fallback jobs plan from (nil without any).
	FallbackFrom *result.Result
}

// Decide merges the checks' results into the step's handoff. It refuses inputs that do
// not agree: files without any check's result, or a failed last check without its result.
func Decide(in Input) (Handoff, error) {
	h := Handoff{Files: append([]string{}, in.Files...), Checked: []string{}, Reports: []string{}, Failed: []result.Failed{}}
	h.Skipped = append([]result.Skipped{}, in.Before...)
	last, err := lastCheck(in)
	if err != nil || last == nil {
		return h, err
	}
	// smoke and gate read the same export results, so the first check's skipped windows
	// are every check's
	h.Skipped = append(h.Skipped, in.Checks[0].Outputs.Skipped...)
	h.Code = last.ExitCode
	if h.Code != result.ExitOK && fallsBack(in, last) {
		h.Code, h.Failed, h.FallbackFrom = result.ExitOK, last.Outputs.Failed, last
	}
	if h.Code != result.ExitOK {
		h.Reason = fmt.Sprintf("exe-expo %s refused the files: %s", last.Command, last.Reason)
		return h, nil
	}
	h.Checked = append(h.Checked, last.Outputs.Files...)
	h.Files = append(h.Files, last.Outputs.Files...)
	h.Reports = append(h.Reports, last.Outputs.Reports...)
	return h, nil
}

// lastCheck is the result of the step's last check, nil when none ran, or why the inputs
// do not agree.
func lastCheck(in Input) (*result.Result, error) {
	if len(in.Checks) == 0 {
		switch {
		case in.Status != result.ExitOK:
			return nil, fmt.Errorf("a check exited with code %d and wrote no result", in.Status)
		case in.Exported:
			return nil, fmt.Errorf("the export folder holds files, and no check's result was given")
		}
		return nil, nil
	}
	last := in.Checks[len(in.Checks)-1]
	if last.ExitCode != in.Status {
		return nil, fmt.Errorf("the last check exited with code %d, and its result (exe-expo %s) says %d: it stopped before it wrote one",
			in.Status, last.Command, last.ExitCode)
	}
	return last, nil
}

// fallsBack says the refusal goes to the fp32 fallback: the gate ran and refused some
// windows' files (a gate that could not run refused none), none of them already fp32,
// and the workflow has a fallback for this recipe.
func fallsBack(in Input, last *result.Result) bool {
	if !in.Fallback || last.Command != "gate" || len(last.Outputs.Failed) == 0 {
		return false
	}
	for _, f := range last.Outputs.Failed {
		if f.QMode == "fp32" {
			return false
		}
	}
	return true
}

// Windows are the refused windows' numbers, what the workflow's fallback condition reads.
func (h Handoff) Windows() []int {
	w := make([]int, 0, len(h.Failed))
	for _, f := range h.Failed {
		w = append(w, f.Window)
	}
	return w
}
