package drivers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransformersOverlay runs driver_io.transformers_for as the drivers call it: a Qwen3.5
// folder puts the overlay setup-export names (EXE_EXPO_TRANSFORMERS_OVERLAY) first on the
// path, a half-installed overlay (no .complete) is refused naming both installers, and any
// other family leaves the path as it was.
func TestTransformersOverlay(t *testing.T) {
	py, dir := anyPython(t), driverDir(t)
	model := func(kind string) string {
		m := filepath.Join(t.TempDir(), "model")
		require.NoError(t, os.MkdirAll(m, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(m, "config.json"), []byte(`{"model_type": "`+kind+`"}`), 0o644))
		return m
	}
	done := filepath.Join(t.TempDir(), "transformers")
	require.NoError(t, os.MkdirAll(done, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(done, ".complete"), []byte("python/overlay.lock\n"), 0o644))
	half := filepath.Join(t.TempDir(), "transformers")
	require.NoError(t, os.MkdirAll(half, 0o755))

	script := "import sys; sys.path.insert(0, sys.argv[1]); import driver_io; before = list(sys.path)\n" +
		"try:\n    driver_io.transformers_for(sys.argv[2])\nexcept ValueError as e:\n    print('refused:', e); sys.exit(0)\n" +
		"print(sys.path[0] if sys.path != before else 'unchanged')\n"
	for _, tc := range []struct {
		name, kind, overlay, want string
	}{
		{"qwen3.5, installed", "qwen3_5", done, done},
		{"qwen3.5 text, installed", "qwen3_5_text", done, done},
		{"qwen3.5, half installed", "qwen3_5", half, "refused: "},
		{"qwen3, installed", "qwen3", done, "unchanged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(py, "-c", script, dir, model(tc.kind))
			cmd.Env = append(os.Environ(), "EXE_EXPO_TRANSFORMERS_OVERLAY="+tc.overlay)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			got := strings.TrimSpace(string(out))
			if strings.HasPrefix(tc.want, "refused") {
				assert.Contains(t, got, tc.want)
				assert.Contains(t, got, tc.overlay+" has none: run python/install.sh, or setup-export with python-env true")
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
