package cost

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// FromReport is the measurement an export report holds: its backend, model, parameters,
// window, total seconds and runner; false for a report without a time (an export that
// recorded none).
func FromReport(path string, r *report.Report) (config.ExportTime, bool) {
	if r.Host.TotalSeconds <= 0 || r.Source.TotalParams <= 0 || r.Window.Context <= 0 {
		return config.ExportTime{}, false
	}
	src := "export report " + path
	if r.Run != nil && r.Run.URL != "" {
		src += " (" + r.Run.URL + ")"
	}
	return config.ExportTime{
		Backend: r.Backend, Model: r.Source.ID, Params: r.Source.TotalParams, Window: r.Window.Context,
		Seconds: float64(int64(r.Host.TotalSeconds + 0.5)), Runner: r.Host.RunnerLabel, Route: routeOf(r), Source: src,
	}, true
}

// routeOf is the optimum route where the report's stages ran it, "" for the backend's own.
func routeOf(r *report.Report) string {
	for _, st := range r.Stages {
		if st.Tool == family.OptimumStep {
			return family.RouteOptimum
		}
	}
	return ""
}

// YAML writes times as pipeline.yaml's export_times list, one entry a line.
func YAML(times []config.ExportTime) string {
	var b strings.Builder
	b.WriteString("export_times:\n")
	for _, t := range times {
		b.WriteString("  - {" + strings.Join(yamlFields(t), ", ") + "}\n")
	}
	return b.String()
}

// yamlFields are one entry's fields in pipeline.yaml's order.
func yamlFields(t config.ExportTime) []string {
	fields := []string{"backend: " + t.Backend}
	if t.Route != "" {
		fields = append(fields, "route: "+t.Route)
	}
	switch {
	case t.Like != "":
		fields = append(fields, "like: "+t.Like)
	case t.Flat:
		fields = append(fields, "flat: true")
	default:
		fields = append(fields, "model: "+t.Model, fmt.Sprintf("params: %d", t.Params), fmt.Sprintf("window: %d", t.Window))
	}
	if t.Like == "" {
		fields = append(fields, fmt.Sprintf("seconds: %g", t.Seconds))
	}
	if t.HostScale > 0 {
		fields = append(fields, fmt.Sprintf("host_scale: %g", t.HostScale))
	}
	if t.Runner != "" {
		fields = append(fields, "runner: "+t.Runner)
	}
	return append(fields, fmt.Sprintf("source: %q", t.Source))
}
