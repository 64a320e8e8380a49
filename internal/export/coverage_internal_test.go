package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

// collectOne runs collect on one .pte the tool "wrote" at from, as an XNNPACK export.
func collectOne(t *testing.T, from string, want check.Expect) (*report.Report, error) {
	t.Helper()
	o := &Options{Backend: "xnnpack", Out: t.TempDir()}
	rep := &report.Report{Metadata: pte.Metadata{}, StructuralCheck: []check.Result{}}
	r := &recipe.Recipe{Outputs: []recipe.Output{{From: from, To: "xnnpack/model.pte", Kind: "pte", Expect: &want}}}
	return rep, o.collect(r, rep)
}

// TestCollectRefusesLinearsOnCPU: the export refuses a file whose linears fall back to
// portable kernels, with the numbers, and the report it keeps records the coverage and
// names the blocker. The file is a real ExecuTorch lowering (XNNPACK's partitioner
// without its gemm configs, pkg/pte/testdata/coverage/make_coverage.py).
func TestCollectRefusesLinearsOnCPU(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "pkg", "pte", "testdata", "coverage", "linear-xnnpack-cpu.pte"))
	require.NoError(t, err)
	from := filepath.Join(t.TempDir(), "linear-xnnpack-cpu.pte")
	require.NoError(t, os.WriteFile(from, src, 0o644))

	rep, err := collectOne(t, from, check.Expect{})
	require.Error(t, err)
	const linears = "forward: 2 of 2 linears run outside the XnnpackBackend delegate, on CPU kernels (aten::addmm.out, aten::mm.out), reading 8448 of the method's 12548 weight bytes (67.3%); 2 of 6 operators run outside it"
	assert.Contains(t, err.Error(), "xnnpack/model.pte: exported program disagrees with the request: ")
	assert.Contains(t, err.Error(), linears)
	require.Len(t, rep.StructuralCheck, 1)
	require.Len(t, rep.StructuralCheck[0].Coverage, 1)
	assert.Equal(t, 2, rep.StructuralCheck[0].Coverage[0].LinearsOutside)
	found := false
	for _, b := range rep.Blockers() {
		found = found || strings.Contains(b, linears)
	}
	assert.True(t, found, "blockers %q", rep.Blockers())
}

// TestCollectRecordsCoverage: a delegated file passes and its report carries the coverage
// per method under structural_check[i].delegate_coverage.
func TestCollectRecordsCoverage(t *testing.T) {
	spec, err := ptetest.LLM{Backend: "xnnpack", WeightsSize: 4096,
		Metadata: ptetest.ExportLLMMetadata(2048, 2048, 1, []int64{2})}.Spec()
	require.NoError(t, err)
	from := filepath.Join(t.TempDir(), "llm.pte")
	require.NoError(t, ptetest.WriteFile(from, spec))

	rep, err := collectOne(t, from, check.Expect{MaxContextLen: 2048})
	require.NoError(t, err)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var v struct {
		StructuralCheck []struct {
			Coverage []struct {
				Method            string `json:"method"`
				LinearsInside     *int   `json:"linears_inside"`
				LinearsOutside    int    `json:"linears_outside"`
				WeightBytesInside int64  `json:"weight_bytes_inside"`
			} `json:"delegate_coverage"`
		} `json:"structural_check"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	require.Len(t, v.StructuralCheck, 1)
	require.Len(t, v.StructuralCheck[0].Coverage, 1)
	c := v.StructuralCheck[0].Coverage[0]
	assert.Equal(t, "forward", c.Method)
	require.NotNil(t, c.LinearsInside)
	assert.Equal(t, 1, *c.LinearsInside)
	assert.Zero(t, c.LinearsOutside)
	assert.Equal(t, int64(4096), c.WeightBytesInside)
}
