package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestFromReportRoute: an export report whose stages ran optimum-executorch is measured for
// that route, one from export_llm for the backend's own fit; a report without a time is no
// measurement.
func TestFromReportRoute(t *testing.T) {
	for _, tc := range []struct {
		stage, route string
	}{{family.OptimumStep, family.RouteOptimum}, {"export_llm", ""}} {
		r := &report.Report{Backend: "xnnpack", Source: report.Source{ID: "google/gemma-3-270m-it", TotalParams: 268098176},
			Window: report.Window{Context: 2048}, Stages: []report.StageReport{{Tool: tc.stage}}}
		r.Host.TotalSeconds = 400.4
		m, ok := FromReport("r.json", r)
		require.True(t, ok)
		assert.Equal(t, tc.route, m.Route, tc.stage)
		assert.Equal(t, 400.0, m.Seconds)
	}
	_, ok := FromReport("r.json", &report.Report{Backend: "xnnpack"})
	assert.False(t, ok)
}
