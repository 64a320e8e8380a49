package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestCostsRefitsFromReports: an export report's time joins the configuration's, the fit
// moves with it, and the printed entries read back as pipeline.yaml's export_times.
func TestCostsRefitsFromReports(t *testing.T) {
	out := t.TempDir()
	r := &report.Report{Backend: "vulkan", Source: report.Source{ID: "Qwen/Qwen3-0.6B", TotalParams: 751632384},
		Window: report.Window{Context: 4096}, Run: &report.Run{URL: "https://github.com/o/r/actions/runs/9"}}
	r.Host.TotalSeconds, r.Host.RunnerLabel = 1234.4, "blacksmith-8vcpu-ubuntu-2404-arm"
	require.NoError(t, report.Write(filepath.Join(out, "vulkan", "export-report-4k.json"), r))

	code, stdout, errs := run(t, "costs", out)
	require.Equal(t, ExitOK, code, errs)
	cfg, err := config.Default()
	require.NoError(t, err)
	assert.Contains(t, stdout, "Export-time fit from "+strconv.Itoa(len(cfg.ExportTimes)+1)+" measurement(s), 1 of them from export reports:")
	assert.Contains(t, stdout, "  vulkan    (0 s + 1642 s per billion parameters) at 2k, × (window / 2048)^0.00 (1 point(s))",
		"a measured Vulkan export takes over from XNNPACK's borrowed fit")
	assert.Contains(t, stdout, "  xnnpack   (502 s + 205 s per billion parameters) at 2k, × (window / 2048)^0.21 (5 point(s))")
	assert.Contains(t, stdout, "  xnnpack/optimum-executorch (428 s + 175 s per billion parameters) at 2k", "the optimum route apart")

	yamlPart := stdout[strings.Index(stdout, "export_times:"):]
	var back struct {
		ExportTimes []config.ExportTime `yaml:"export_times"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(yamlPart), &back), yamlPart)
	require.Len(t, back.ExportTimes, len(cfg.ExportTimes)+1)
	assert.Equal(t, cfg.ExportTimes, back.ExportTimes[:len(cfg.ExportTimes)])
	assert.Equal(t, config.ExportTime{Backend: "vulkan", Model: "Qwen/Qwen3-0.6B", Params: 751632384, Window: 4096, Seconds: 1234,
		Runner: "blacksmith-8vcpu-ubuntu-2404-arm", Source: "export report " + filepath.Join(out, "vulkan", "export-report-4k.json") + " (https://github.com/o/r/actions/runs/9)"},
		back.ExportTimes[len(cfg.ExportTimes)])

	code, _, errs = run(t, "costs", t.TempDir())
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "holds no export report")
}
