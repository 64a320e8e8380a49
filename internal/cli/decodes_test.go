package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// TestCommandsDecodeConfigOnce: each command that opens a model decodes its config.json
// once, the table, the JSON and the export all reading the value decoded then; and looks
// its family up once, in the verdict (none for a config refused before it), every later
// step taking the verdict's.
func TestCommandsDecodeConfigOnce(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	bin := standinBin(t)
	folder := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	root := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		code    int
		lookups int64
	}{
		{"plan from the snapshot", []string{"plan", "Qwen/Qwen3-1.7B"}, ExitOK, 1},
		{"plan --json of one backend", []string{"plan", "--json", "LiquidAI/LFM2.5-1.2B-Base", "--backend", "mediatek"}, ExitNotEligible, 1},
		{"plan of a local folder", []string{"plan", modelFolder(t, "weights", nil), "--id", "Qwen/Qwen3-0.6B"}, ExitOK, 1},
		{"plan of a refused folder", []string{"plan", modelFolder(t, "m", map[string]any{"num_key_value_heads": 3})}, ExitFailed, 0},
		{"export", []string{"export", "--backend", "xnnpack", folder, "--context", "2048", "--out", filepath.Join(root, "out"),
			"--work", filepath.Join(root, "work"), "--python", filepath.Join(bin, "python-ok")}, ExitOK, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, lookups := model.Decodes(), family.Lookups()
			code, out, errs := run(t, tc.args...)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errs)
			assert.Equal(t, int64(1), model.Decodes()-before, "config.json decodes of %v", tc.args)
			assert.Equal(t, tc.lookups, family.Lookups()-lookups, "family lookups of %v", tc.args)
		})
	}
}
