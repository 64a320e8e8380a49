package workflow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// TestSpeedStepRunsWhereTheFileWasBuilt: the XNNPACK export job times its file with
// `exe-expo speed` right after the export, on the export's own runner, which pipeline.yaml
// makes ARM (the phone's kernels), and a failed speed run warns without failing the build;
// a backend the runner cannot run (Vulkan) has no speed step.
func TestSpeedStepRunsWhereTheFileWasBuilt(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	require.NotEmpty(t, cfg.Export.XNNPACK.Runners)
	for _, r := range cfg.RunnersFor(cfg.Export.XNNPACK.Runners) {
		assert.Equal(t, "arm64", r.Arch, "XNNPACK export runner %s: the speed step runs there and must be ARM", r.Name)
	}

	for _, job := range []string{"export", "fallback"} {
		speedScript := script(t, "export-xnnpack.yml", job, "Time the file on this runner")
		for _, rc := range []int{0, 2} {
			r := runStep(t, speedScript, map[string]string{"BACKEND": "xnnpack"}, answer{rc: rc}, nil)
			assert.Equal(t, 0, r.code, "%s job, speed exits %d: %s", job, rc, r.log)
			require.Len(t, r.args, 1)
			assert.Equal(t, "speed out --backend xnnpack", r.args[0])
			if rc != 0 {
				assert.Contains(t, r.log, "::warning title=exe-expo speed::the speed run exited 2")
			}
		}
	}

	data, err := os.ReadFile(filepath.Join(root, OutputDir, "export-vulkan.yml"))
	require.NoError(t, err)
	for _, s := range steps(decode(t, data).jobs()["export"]) {
		assert.NotEqual(t, "Time the file on this runner", s["name"], "Vulkan files need a phone's GPU")
	}
}
