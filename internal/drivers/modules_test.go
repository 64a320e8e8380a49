package drivers

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryModuleIsWritten: every Python file of the package is embedded and written by
// WriteScripts, so a driver split into modules finds each of them beside it on a runner.
func TestEveryModuleIsWritten(t *testing.T) {
	here, err := filepath.Glob("*.py")
	require.NoError(t, err)
	require.NotEmpty(t, here)
	names := slices.Sorted(slices.Values(Names()))
	assert.Equal(t, slices.Sorted(slices.Values(here)), names, "the package's .py files and Names")
	for _, n := range names {
		_, err := Source(n)
		assert.NoError(t, err, "%s is embedded", n)
	}
}

// TestQNNLaunchLoadsByPath loads the written launcher as e2e/realtool's vendor/qnn_stage.py
// and docs/research/qnn-calibration/calib_times.py do, by its path from another folder: its
// modules import from beside it, and the names those tools use are the launcher's.
func TestQNNLaunchLoadsByPath(t *testing.T) {
	launcher := filepath.Join(driverDir(t), QNNLaunchScript)
	prog := `import importlib.util, sys
spec = importlib.util.spec_from_file_location("qnn_launch", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
print(" ".join(n for n in ("main", "provide_torchtune", "record_calibration", "LLAMA") if hasattr(m, n)))`
	cmd := exec.Command(anyPython(t), "-c", prog, launcher)
	cmd.Dir = t.TempDir()
	cmd.Env = append(cmd.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "main provide_torchtune record_calibration LLAMA\n", string(out))
}
