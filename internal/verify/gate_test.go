package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/verify"
)

// probeRunner runs audit's gate-probe stand-in in the place of gate_probe.py: the export
// gives fp32's token probability PROBE_P on every row and position; skipped without python3.
func probeRunner(t *testing.T, p string) drivers.Runner {
	t.Helper()
	py3, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	script, err := filepath.Abs(filepath.Join("..", "audit", "testdata", "probe_standin.py"))
	require.NoError(t, err)
	py := filepath.Join(t.TempDir(), "python")
	require.NoError(t, os.WriteFile(py, []byte("#!/bin/sh\nshift\nexec "+py3+" "+script+"\n"), 0o755))
	t.Setenv("PROBE_LOG", filepath.Join(t.TempDir(), "probe.log"))
	t.Setenv("PROBE_P", p)
	return drivers.Runner{Python: py}
}

// TestMeasureGradesInt8CacheDeep: verify hands the gate the cache the report's recipe
// names, so an int8-cache file whose deep positions drift past gate.max_deep_mean_kl (0.05
// in the embedded configuration) fails, while the same figures on an fp32-cache file pass.
// At p = 0.75 the rows pass (shortfall 0.15, every top token fp32's) and the mean KL at
// every position is 0.9 ln(0.9/0.75) + 0.1 ln(0.1/0.25) = 0.073.
func TestMeasureGradesInt8CacheDeep(t *testing.T) {
	cfg, err := config.Load("")
	require.NoError(t, err)
	for _, tc := range []struct {
		kv     string
		passed bool
	}{
		{"int8", false},
		{"fp32", true},
	} {
		t.Run(tc.kv, func(t *testing.T) {
			r := probeRunner(t, "0.75")
			g, err := verify.GateFrom(cfg, "", t.TempDir())
			require.NoError(t, err)
			ref, err := g.Reference(context.Background(), r, filepath.Join(t.TempDir(), "gate.json"))
			require.NoError(t, err)
			out, path := export(t, "xnnpack", 1000, map[string]int{"xnnpack/m.pte": 1000})
			rep, err := report.Read(path)
			require.NoError(t, err)
			rep.Recipe = map[string]any{"kv_cache_dtype": tc.kv}
			require.NoError(t, report.Write(path, rep))

			_, err = g.Measure(context.Background(), r, out, path, ref)
			require.NoError(t, err)
			back, err := report.Read(path)
			require.NoError(t, err)
			require.NotNil(t, back.Gate)
			require.NotNil(t, back.Gate.Fidelity)
			require.NotNil(t, back.Gate.Fidelity.Deep)
			assert.InDelta(t, 0.073, back.Gate.Fidelity.Deep.MeanKL, 1e-3)
			assert.Equal(t, tc.passed, back.Gate.Passed, "problems: %v", back.Gate.Problems)
			if !tc.passed {
				require.Len(t, back.Gate.Problems, 1)
				assert.Contains(t, back.Gate.Problems[0], "the int8 KV cache drifts")
			}
		})
	}
}
