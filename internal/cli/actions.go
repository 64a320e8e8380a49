package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// inActions reports whether this process runs as a GitHub Actions step.
func inActions() bool { return os.Getenv("GITHUB_ACTIONS") == "true" }

// actionsFor writes workflow commands to w (the step's stdout).
func actionsFor(env Env) *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(env.Stdout))
}

// maskTokens registers the tokens this process can see with the runner, so that no log
// line of ours or of a tool's prints them. The runner reads commands from stderr too, and
// stdout may be data a step keeps (`plan --json > plan.json`), so the masks go to stderr.
func maskTokens(env Env) {
	if !inActions() {
		return
	}
	a := githubactions.New(githubactions.WithWriter(env.Stderr))
	for _, name := range []string{"HF_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"} {
		if v := os.Getenv(name); v != "" {
			a.AddMask(v)
		}
	}
}

// stepSummary appends markdown to the job's summary page when there is one.
func stepSummary(env Env, md string) {
	if os.Getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	actionsFor(env).AddStepSummary(md)
}

func exportSummary(r *report.Report) string {
	var b strings.Builder
	target := r.Target
	if r.TargetName != "" {
		target += " (" + r.TargetName + ")"
	}
	fmt.Fprintf(&b, "### %s → %s, %s, %d tokens\n\n", r.Source.ID, r.Backend, target, r.Window.Context)
	fmt.Fprintf(&b, "%s\n\n", r.Recipe["description"])
	b.WriteString("| file | size | sha256 | check |\n|---|---:|---|---|\n")
	for i, f := range r.Files {
		check := ""
		if i < len(r.StructuralCheck) {
			check = r.StructuralCheck[i].Verdict()
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%.12s` | %s |\n", f.Path, sizing.GB(f.Bytes), f.SHA256, check)
	}
	fmt.Fprintf(&b, "\nWindow: %s. Phone: %s resident, %s the %s budget. ", r.Window.Reason, sizing.GB(r.Window.DeviceResident),
		map[bool]string{true: "within", false: "above"}[r.Window.FitsPhoneBudget], sizing.GB(r.Window.PhoneBudgetBytes))
	fmt.Fprintf(&b, ".pte estimate %s, actual %s. Host need estimate %s, peak in use %s, tool's peak RSS %s.\n",
		sizing.GB(r.Estimates.PTEBytesEstimate), sizing.GB(r.Estimates.PTEBytesActual), sizing.GiB(r.Estimates.HostNeedBytes),
		sizing.GiB(r.Host.PeakInUseBytes), sizing.GiB(r.Host.PeakRSSExportBytes))
	for _, st := range r.Stages {
		fmt.Fprintf(&b, "\n%s: %s\n", st.Tool, st.Timings.String())
	}
	return b.String()
}

func planSummary(p *plan.Plan) string {
	var b strings.Builder
	verdict := "not eligible"
	if p.Verdict.Eligible {
		verdict = "eligible"
	}
	fmt.Fprintf(&b, "### plan %s: %s\n\n", p.Model, verdict)
	for _, r := range p.Verdict.Reasons {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	b.WriteString("\n| backend | windows | skipped |\n|---|---|---|\n")
	for _, bp := range p.Backends {
		if !bp.OK {
			fmt.Fprintf(&b, "| %s | — | %s |\n", bp.Title, bp.Reason)
			continue
		}
		var ok, skip []string
		for _, row := range bp.Rows {
			if row.Skip != "" {
				skip = append(skip, row.Label+": "+row.Skip)
			} else {
				ok = append(ok, row.Label+" on "+row.Runner)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", bp.Title, strings.Join(ok, "<br>"), strings.Join(skip, "<br>"))
	}
	if p.Layout != nil {
		fmt.Fprintf(&b, "\nRepo layout (every backend): %s\n", p.Layout.Line())
	}
	return b.String()
}

// sizingTable is the step summary of one backend's selection: every window asked for with
// what its export needs and the runner that builds it, or why none can.
func sizingTable(p *plan.Plan, backendName string, s plan.Selection) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s → %s: the windows to build\n\n", p.Model, backendName)
	if len(s.SoCs) > 0 {
		fmt.Fprintf(&b, "Chips: %s.\n\n", strings.Join(s.SoCs, ", "))
	}
	b.WriteString("| window | host need | runner | swap | skipped because |\n|---|---:|---|---:|---|\n")
	for _, row := range s.Rows {
		runner, swap := "—", "—"
		if row.Skip == "" {
			runner, swap = "`"+row.Runner+"`", fmt.Sprintf("%d GiB", row.SwapGiB)
		}
		fmt.Fprintf(&b, "| %s (%d) | %s | %s | %s | %s |\n", row.Label, row.Window, sizing.GiB(row.HostNeedBytes), runner, swap, row.Skip)
	}
	return b.String()
}
