package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInspectCoverage: inspect shows each code method's delegate coverage in JSON (the
// figures the report records) and refuses, on stderr, a file whose linears run on CPU
// kernels outside its delegate.
func TestInspectCoverage(t *testing.T) {
	files := inspectFiles(t)
	out, errOut, code := inspect(t, files["llm-xnnpack.pte"], "--json")
	require.Equal(t, ExitOK, code, "stderr %q", errOut)
	var v struct {
		Methods []struct {
			Name     string `json:"name"`
			Coverage *struct {
				OperatorsInside   *int     `json:"operators_inside"`
				LinearsInside     *int     `json:"linears_inside"`
				LinearsOutside    int      `json:"linears_outside"`
				WeightBytesInside int64    `json:"weight_bytes_inside"`
				WeightShareInside *float64 `json:"weight_share_inside"`
			} `json:"delegate_coverage"`
		} `json:"methods"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	for _, m := range v.Methods {
		if m.Name != "forward" {
			assert.Nil(t, m.Coverage, "%s is a getter: no coverage", m.Name)
			continue
		}
		require.NotNil(t, m.Coverage)
		assert.Equal(t, 1, *m.Coverage.OperatorsInside)
		assert.Equal(t, 1, *m.Coverage.LinearsInside)
		assert.Zero(t, m.Coverage.LinearsOutside)
		assert.Equal(t, int64(1<<20), m.Coverage.WeightBytesInside, "the stand-in's weights are its named data")
		assert.Equal(t, 1.0, *m.Coverage.WeightShareInside)
	}

	_, errOut, code = inspect(t, files["linear-xnnpack-cpu.pte"], "--backend", "xnnpack")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errOut, "fails the xnnpack structural check: ")
	assert.Contains(t, errOut, "; forward: 2 of 2 linears run outside the XnnpackBackend delegate, on CPU kernels (aten::addmm.out, aten::mm.out), reading 8448 of the method's 12548 weight bytes (67.3%); 2 of 6 operators run outside it")
}
