package check_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coverageFile is one of the files ExecuTorch 1.4.0 made for the coverage tests
// (pkg/pte/testdata/coverage/make_coverage.py).
func coverageFile(name string) string {
	return filepath.Join("..", "..", "pkg", "pte", "testdata", "coverage", name)
}

// linearProblems keeps the problems about linears outside the delegate.
func linearProblems(r check.Result) []string {
	var out []string
	for _, p := range r.Problems {
		if strings.Contains(p, "linears run outside") {
			out = append(out, p)
		}
	}
	return out
}

// TestLinearsOutsideRealFiles: the structural check refuses a real file whose linears fall
// back to portable kernels, with the numbers, and passes the fully delegated ones.
func TestLinearsOutsideRealFiles(t *testing.T) {
	tests := []struct {
		file, backend string
		want          []string
	}{
		// XNNPACK's partitioner without its gemm configs: the ReLU and the multiply are
		// delegated, the two linears are addmm and mm on the CPU.
		{"linear-xnnpack-cpu.pte", "xnnpack", []string{
			"forward: 2 of 2 linears run outside the XnnpackBackend delegate, on CPU kernels (aten::addmm.out, aten::mm.out), reading 8448 of the method's 12548 weight bytes (67.3%); 2 of 6 operators run outside it"}},
		// No partitioner at all.
		{"linear-portable.pte", "xnnpack", []string{
			"forward: 2 of 2 linears run outside the xnnpack delegate, on CPU kernels (aten::addmm.out, aten::mm.out), reading 12544 of the method's 12548 weight bytes (100.0%); 6 of 6 operators run outside it"}},
		{"linear-portable.pte", "vulkan", []string{
			"forward: 2 of 2 linears run outside the vulkan delegate, on CPU kernels (aten::addmm.out, aten::mm.out), reading 12544 of the method's 12548 weight bytes (100.0%); 6 of 6 operators run outside it"}},
		{"linear-xnnpack.pte", "xnnpack", nil},
		{"linear-xnnpack-8da4w.pte", "xnnpack", nil},
		{"linear-vulkan.pte", "vulkan", nil},
	}
	for _, tc := range tests {
		t.Run(tc.file+" as "+tc.backend, func(t *testing.T) {
			r := check.StructuralFile(coverageFile(tc.file), spec(tc.backend), check.Expect{})
			assert.Equal(t, tc.want, linearProblems(r))
			// The files carry no LLM metadata, so the check fails on that in any case.
			assert.False(t, r.Passed)
			require.Len(t, r.Coverage, 1)
			assert.Equal(t, "forward", r.Coverage[0].Method)
		})
	}
}

// TestLinearsOutsideBuilt: a file otherwise right for its backend fails on its linears
// alone, for every backend, with "how many inside" left out where the payload is opaque.
func TestLinearsOutsideBuilt(t *testing.T) {
	program := builder(t)
	withCPULinears := func(s ptetest.Spec, err error) (ptetest.Spec, error) {
		for i := range s.Methods {
			s.Methods[i].CPULinears = 2
		}
		return s, err
	}
	tests := []struct {
		name, backend string
		prog          *pte.Program
		want          check.Expect
		problems      []string
	}{
		{"xnnpack", "xnnpack", program(withCPULinears(ptetest.LLM{Backend: "xnnpack", Metadata: llmMeta()}.Spec())), structuralRequest, []string{
			"forward: 2 of 3 linears run outside the XnnpackBackend delegate, on CPU kernels (aten::linear.out ×2), reading 0 of the method's 0 weight bytes (no weights); 2 of 3 operators run outside it"}},
		{"vulkan", "vulkan", program(withCPULinears(ptetest.LLM{Backend: "vulkan", Metadata: llmMeta()}.Spec())), structuralRequest, []string{
			"forward: 2 of 3 linears run outside the VulkanBackend delegate, on CPU kernels (aten::linear.out ×2), reading 0 of the method's 0 weight bytes (no weights); 2 of 3 operators run outside it"}},
		{"qnn", "qnn", program(withCPULinears(ptetest.QNN{}.Spec())), check.Expect{}, []string{
			"kv_forward: 2 linears run outside the QnnBackend delegate, on CPU kernels (aten::linear.out ×2), reading 0 of the method's 65536 weight bytes (0.0%); 2 operators run outside it (its payload does not say how many run inside)",
			"prefill_forward: 2 linears run outside the QnnBackend delegate, on CPU kernels (aten::linear.out ×2), reading 0 of the method's 65536 weight bytes (0.0%); 2 operators run outside it (its payload does not say how many run inside)"}},
		{"mediatek", "mediatek", program(withCPULinears(structuralChunk.Spec())), check.Expect{MediaTek: structuralMTKWant}, []string{
			"Qwen3-0.6B_A16W4_4_chunks_128t2048c_1: 2 linears run outside the NeuropilotBackend delegate, on CPU kernels (aten::linear.out ×2), reading 0 of the method's 4096 weight bytes (0.0%); 2 operators run outside it (its payload does not say how many run inside)",
			"Qwen3-0.6B_A16W4_4_chunks_1t2048c_1: 2 linears run outside the NeuropilotBackend delegate, on CPU kernels (aten::linear.out ×2), reading 0 of the method's 4224 weight bytes (0.0%); 2 operators run outside it (its payload does not say how many run inside)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := check.Structural(tc.prog, spec(tc.backend), tc.want)
			assert.Equal(t, tc.problems, r.Problems)
			assert.False(t, r.Passed)
		})
	}
}

// TestCoverageRecorded: the verdict the report stores carries each code method's
// coverage, and an empty list (not null) when the file did not load.
func TestCoverageRecorded(t *testing.T) {
	r := check.StructuralFile(coverageFile("linear-xnnpack.pte"), spec("xnnpack"), check.Expect{})
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var v struct {
		Coverage []map[string]any `json:"delegate_coverage"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	require.Len(t, v.Coverage, 1)
	assert.Equal(t, 2.0, v.Coverage[0]["linears_inside"])
	assert.Equal(t, 0.0, v.Coverage[0]["linears_outside"])
	assert.Equal(t, 1.0, v.Coverage[0]["weight_share_inside"])

	r = check.StructuralFile(filepath.Join(t.TempDir(), "missing.pte"), spec("xnnpack"), check.Expect{})
	b, err = json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"delegate_coverage":[]`)
}

// TestLinearsOutsideAtTheEdge: the delegate-coverage rule lets no linear onto CPU kernels.
// The same file passes with none there and fails with one, for a backend whose payload
// counts its linears (XNNPACK) and one whose payload is opaque (QNN); a rule that let one
// linear through would pass the second case (docs/research/bounds.md).
func TestLinearsOutsideAtTheEdge(t *testing.T) {
	program := builder(t)
	cpuLinears := func(n int) func(ptetest.Spec, error) (ptetest.Spec, error) {
		return func(s ptetest.Spec, err error) (ptetest.Spec, error) {
			for i := range s.Methods {
				s.Methods[i].CPULinears = n
			}
			return s, err
		}
	}
	tests := []struct {
		name, backend string
		spec          func() (ptetest.Spec, error)
		want          check.Expect
	}{
		{"xnnpack", "xnnpack", ptetest.LLM{Backend: "xnnpack", Metadata: llmMeta()}.Spec, structuralRequest},
		{"qnn", "qnn", ptetest.QNN{}.Spec, check.Expect{}},
	}
	for _, tc := range tests {
		for n, passed := range map[int]bool{0: true, 1: false} {
			t.Run(fmt.Sprintf("%s with %d linear(s) outside", tc.name, n), func(t *testing.T) {
				r := check.Structural(program(cpuLinears(n)(tc.spec())), spec(tc.backend), tc.want)
				assert.Equal(t, passed, r.Passed, "%v", r.Problems)
				for _, c := range r.Coverage {
					assert.Equal(t, n, c.LinearsOutside, c.Method)
				}
			})
		}
	}
}
