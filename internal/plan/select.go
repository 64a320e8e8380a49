package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// SchemaVersion is the version of the plan JSON (`exe-expo plan --json`) this exe-expo
// writes and reads (docs/results.md).
const SchemaVersion = 1

// Decode reads a plan printed by `exe-expo plan --json`, refusing another schema version.
func Decode(name string, b []byte) (*Plan, error) {
	var v struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s is not an exe-expo plan (JSON): %w", name, err)
	}
	if err := result.CheckVersion(name, "plan", v.SchemaVersion, SchemaVersion); err != nil {
		return nil, err
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s is not an exe-expo plan: %w", name, err)
	}
	return &p, nil
}

// Decision is the plan's verdict for one backend (or, with none named, for the model): the
// exit code every command, action and workflow gives for it, and the sentence that says
// why when it is not ExitOK. A model that is not eligible, and a backend that does not take
// it, are both ExitNotEligible: nothing will be built either way.
func (p *Plan) Decision(backendName string) (int, string) {
	if !p.Verdict.Eligible {
		why := strings.Join(p.Verdict.Reasons, "; ")
		if why == "" {
			why = "no backend exports it (each backend's section says why)"
		}
		return result.ExitNotEligible, fmt.Sprintf("%s is not eligible: %s", p.Model, why)
	}
	if backendName == "" {
		return result.ExitOK, ""
	}
	bp := p.backend(backendName)
	if bp == nil {
		return result.ExitFailed, fmt.Sprintf("the plan of %s has no %s section", p.Model, backendName)
	}
	if !bp.OK {
		return result.ExitNotEligible, fmt.Sprintf("%s does not take %s: %s", bp.Title, p.Model, bp.Reason)
	}
	return result.ExitOK, ""
}

func (p *Plan) backend(name string) *BackendPlan {
	for i := range p.Backends {
		if p.Backends[i].Backend == name {
			return &p.Backends[i]
		}
	}
	return nil
}

// Selection is what one backend's export jobs build: the windows asked for with the runner
// that builds each, the windows no runner can build with the reason, and the chips.
type Selection struct {
	Windows []result.Window
	Skipped []result.Skipped
	SoCs    []string
	// Rows are the plan's rows of the windows asked for, in the plan's order.
	Rows []Row
	// Calibrate is the backend's calibrate job, run once per chip, where the plan has one
	// (BackendPlan.Calibrate) and a window is to be built: its window and runner.
	Calibrate []result.Window
}

// Select picks the windows in contexts and the chips in socs (each separated by commas or
// spaces; empty means all) out of an OK backend's rows. A window or chip the backend does
// not have is refused by name, with the ones it has.
func (p *Plan) Select(backendName, contexts, socs string) (Selection, error) {
	bp := p.backend(backendName)
	if bp == nil || !bp.OK {
		_, reason := p.Decision(backendName)
		return Selection{}, fmt.Errorf("%s", reason)
	}
	rows, err := pickRows(bp, contexts)
	if err != nil {
		return Selection{}, err
	}
	s := Selection{Rows: rows}
	for _, row := range rows {
		if row.Skip != "" {
			s.Skipped = append(s.Skipped, result.Skipped{Window: row.Window, Reason: row.Skip})
			continue
		}
		s.Windows = append(s.Windows, result.Window{Window: row.Window, Runner: row.Runner, SwapGiB: row.SwapGiB})
	}
	if s.SoCs, err = pickSoCs(bp, socs); err != nil {
		return Selection{}, err
	}
	if c := bp.Calibrate; c != nil && len(s.Windows) > 0 {
		s.Calibrate = []result.Window{{Window: c.Window, Runner: c.Runner, SwapGiB: c.SwapGiB}}
	}
	return s, nil
}

// pickRows is the backend's rows for the windows in contexts, in the plan's order.
func pickRows(bp *BackendPlan, contexts string) ([]Row, error) {
	have := make(map[int]bool, len(bp.Rows))
	for _, row := range bp.Rows {
		have[row.Window] = true
	}
	want := map[int]bool{}
	for _, w := range SplitList(contexts) {
		n, err := strconv.Atoi(w)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("contexts: %q is not a window in tokens such as 4096", w)
		}
		if !have[n] {
			return nil, fmt.Errorf("contexts: %d is not among %s's windows (%s)", n, bp.Title, windowList(bp))
		}
		want[n] = true
	}
	var rows []Row
	for _, row := range bp.Rows {
		if len(want) == 0 || want[row.Window] {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// windowList is the backend's windows in tokens, in the plan's order, for a refusal.
func windowList(bp *BackendPlan) string {
	ws := make([]string, 0, len(bp.Rows))
	for _, row := range bp.Rows {
		ws = append(ws, strconv.Itoa(row.Window))
	}
	return strings.Join(ws, ", ")
}

// pickSoCs is the chips to build for: the plan's targets (from config), or the ones asked
// for, each of which must be a target.
func pickSoCs(bp *BackendPlan, socs string) ([]string, error) {
	asked := SplitList(socs)
	if len(bp.Targets) == 0 {
		if len(asked) > 0 {
			return nil, fmt.Errorf("socs: %s builds no per-chip files, so it takes no chips (got %s)", bp.Title, strings.Join(asked, ", "))
		}
		return nil, nil
	}
	if len(asked) == 0 {
		return bp.Targets, nil
	}
	for _, soc := range asked {
		if !slices.Contains(bp.Targets, soc) {
			return nil, fmt.Errorf("socs: %s is not one of %s's chips (%s)", soc, bp.Title, strings.Join(bp.Targets, ", "))
		}
	}
	return asked, nil
}

// SplitList splits a list separated by commas or spaces, as workflow inputs give them.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
