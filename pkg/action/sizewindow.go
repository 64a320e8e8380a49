package action

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/cli"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// Entry is one window to build: a matrix entry of the export job, in the shape the
// generated workflows' plan job writes.
type Entry struct {
	Window  int    `json:"window"`
	Runner  string `json:"runner"`
	SwapGiB int    `json:"swap_gib"`
}

// Skipped is a window no runner tier can build, with the plan's reason.
type Skipped struct {
	Window int    `json:"window"`
	Reason string `json:"reason"`
}

// Sizing is size-window's answer for one model and backend.
type Sizing struct {
	Windows []Entry
	Skipped []Skipped
	// SoCs are the chips every window is built for (QNN, MediaTek); nil for the others.
	SoCs []string
	// rows are the plan's rows for the requested windows, for the step summary.
	rows []plan.Row
}

// Matrix is the export job's strategy.matrix: one job per window (and per chip).
func (s Sizing) Matrix() map[string]any {
	m := map[string]any{"entry": nonNil(s.Windows)}
	if len(s.SoCs) > 0 {
		m["soc"] = s.SoCs
	}
	return m
}

const sizeWindow = "size-window"

// SizeWindow plans one model for one backend (`exe-expo plan --json`) and writes the windows
// to build, the windows skipped with their reasons and the chips as JSON outputs, with the
// sizing table in the step summary. A model that is not eligible exits 3, a backend that
// does not take it or a window it does not have exits 2, each with an error annotation.
func SizeWindow(e Env) int {
	if err := e.maskSecrets(hfToken); err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	model, err := e.required("model-id")
	if err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	backendName, err := e.required("backend")
	if err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	args := flags([]string{"plan", model, "--backend", backendName, "--json"},
		"--revision", e.GH.GetInput("revision"), "--config", e.GH.GetInput("config"))
	r := e.cli(args, false)
	if r.code != cli.ExitOK && r.code != cli.ExitNotEligible {
		return e.fail(sizeWindow, r.code, "%s", r.reason())
	}
	var p plan.Plan
	if err := json.Unmarshal(r.data(), &p); err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "exe-expo plan --json printed no plan of %s on stdout", model)
	}
	if !p.Verdict.Eligible {
		return e.fail(sizeWindow, cli.ExitNotEligible, "%s is not eligible: %s", model, strings.Join(p.Verdict.Reasons, "; "))
	}
	s, err := sizeFrom(&p, backendName, e.GH.GetInput("contexts"), e.GH.GetInput("socs"))
	if err != nil {
		return e.fail(sizeWindow, cli.ExitFailed, "%v", err)
	}
	e.GH.SetOutput("windows", jsonOf(nonNil(s.Windows)))
	e.GH.SetOutput("skipped", jsonOf(nonNil(s.Skipped)))
	e.GH.SetOutput("socs", jsonOf(nonNil(s.SoCs)))
	e.GH.SetOutput("matrix", jsonOf(s.Matrix()))
	e.GH.AddStepSummary(sizingTable(&p, backendName, s))
	return cli.ExitOK
}

// sizeFrom picks the requested windows and chips out of the plan's rows for backendName:
// contexts and socs are comma (or space) separated; empty means all of them.
func sizeFrom(p *plan.Plan, backendName, contexts, socs string) (Sizing, error) {
	var bp *plan.BackendPlan
	for i := range p.Backends {
		if p.Backends[i].Backend == backendName {
			bp = &p.Backends[i]
		}
	}
	if bp == nil {
		return Sizing{}, fmt.Errorf("the plan of %s has no %s section", p.Model, backendName)
	}
	if !bp.OK {
		return Sizing{}, fmt.Errorf("%s does not take %s: %s", bp.Title, p.Model, bp.Reason)
	}
	rows, err := pickRows(bp, contexts)
	if err != nil {
		return Sizing{}, err
	}
	s := Sizing{rows: rows}
	for _, row := range rows {
		if row.Skip != "" {
			s.Skipped = append(s.Skipped, Skipped{Window: row.Window, Reason: row.Skip})
			continue
		}
		s.Windows = append(s.Windows, Entry{Window: row.Window, Runner: row.Runner, SwapGiB: row.SwapGiB})
	}
	if s.SoCs, err = pickSoCs(bp, socs); err != nil {
		return Sizing{}, err
	}
	return s, nil
}

// pickRows is the backend's rows for the windows in contexts, in the plan's order.
func pickRows(bp *plan.BackendPlan, contexts string) ([]plan.Row, error) {
	have := make(map[int]bool, len(bp.Rows))
	for _, row := range bp.Rows {
		have[row.Window] = true
	}
	want := map[int]bool{}
	for _, w := range splitList(contexts) {
		n, err := strconv.Atoi(w)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("input contexts: %q is not a window in tokens such as 4096", w)
		}
		if !have[n] {
			return nil, fmt.Errorf("input contexts: %d is not among %s's windows (%s)", n, bp.Title, windowList(bp))
		}
		want[n] = true
	}
	var rows []plan.Row
	for _, row := range bp.Rows {
		if len(want) == 0 || want[row.Window] {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// windowList is the backend's windows in tokens, in the plan's order, for a refusal.
func windowList(bp *plan.BackendPlan) string {
	ws := make([]string, 0, len(bp.Rows))
	for _, row := range bp.Rows {
		ws = append(ws, strconv.Itoa(row.Window))
	}
	return strings.Join(ws, ", ")
}

// pickSoCs is the chips to build for: the plan's targets (from config), or the ones asked
// for, each of which must be a target.
func pickSoCs(bp *plan.BackendPlan, socs string) ([]string, error) {
	asked := splitList(socs)
	if len(bp.Targets) == 0 {
		if len(asked) > 0 {
			return nil, fmt.Errorf("input socs: %s builds no per-chip files, so it takes no chips (got %s)", bp.Title, strings.Join(asked, ", "))
		}
		return nil, nil
	}
	if len(asked) == 0 {
		return bp.Targets, nil
	}
	for _, soc := range asked {
		if !slices.Contains(bp.Targets, soc) {
			return nil, fmt.Errorf("input socs: %s is not one of %s's chips (%s)", soc, bp.Title, strings.Join(bp.Targets, ", "))
		}
	}
	return asked, nil
}

// sizingTable is the step summary: every requested window with what its export needs and
// the runner that builds it, or why none can.
func sizingTable(p *plan.Plan, backendName string, s Sizing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### size-window: %s → %s\n\n", p.Model, backendName)
	if len(s.SoCs) > 0 {
		fmt.Fprintf(&b, "Chips: %s.\n\n", strings.Join(s.SoCs, ", "))
	}
	b.WriteString("| window | host need | runner | swap | skipped because |\n|---|---:|---|---:|---|\n")
	for _, row := range s.rows {
		runner, swap := "—", "—"
		if row.Skip == "" {
			runner, swap = "`"+row.Runner+"`", fmt.Sprintf("%d GiB", row.SwapGiB)
		}
		fmt.Fprintf(&b, "| %s (%d) | %s | %s | %s | %s |\n", row.Label, row.Window, sizing.GiB(row.HostNeedBytes), runner, swap, row.Skip)
	}
	return b.String()
}

// splitList splits an input holding a list separated by commas or spaces.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

// nonNil keeps an empty list an empty JSON array, which `fromJSON(...) != '[]'` tests.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// jsonOf is v as one line of JSON. The values here are plain structs, lists and maps of
// them, which always encode.
func jsonOf(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic("action: encode an output: " + err.Error())
	}
	return string(data)
}
