package pte_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/google/go-cmp/cmp"
)

func ip(n int) *int { return &n }

// coverageWant is a method's coverage with the shares left out (they follow from the rest).
type coverageWant struct {
	delegateCalls   int
	opsIn           *int
	opsOut          int
	linIn           *int
	linOut          int
	linOps          map[string]int
	wIn, wOut, linW int64
	outside         map[string]int // checked when set
	graphs          []string       // each delegate's graph: "XNNGraph 3/2" (nodes/linears)
	methodName      string
}

// TestCoverageFixtures measures the real files: the toolchain's own (testdata/coverage,
// made by make_coverage.py with ExecuTorch 1.4.0) and the upstream fixtures. The numbers
// were checked by hand against the files (docs/research/pte.md, section 10): the module's
// weights are fc1 64×32 + 64 and fc2 16×64 fp32 (8192 + 256 + 4096 bytes) and the 2.0
// multiplier (4 bytes).
func TestCoverageFixtures(t *testing.T) {
	none := map[string]int{}
	tests := map[string]coverageWant{
		"coverage/linear-portable.pte": {opsIn: ip(0), opsOut: 6, linIn: ip(0), linOut: 2,
			linOps: map[string]int{"aten::addmm.out": 1, "aten::mm.out": 1}, wOut: 12548, linW: 12544,
			outside: map[string]int{"aten::addmm.out": 1, "aten::mm.out": 1, "aten::mul.out": 1, "aten::permute_copy.out": 2, "aten::relu.out": 1}},
		"coverage/linear-xnnpack.pte": {delegateCalls: 1, opsIn: ip(3), linIn: ip(2), linOps: none, wIn: 12548,
			outside: none, graphs: []string{"XNNGraph 3/2"}},
		"coverage/linear-xnnpack-8da4w.pte": {delegateCalls: 1, opsIn: ip(5), linIn: ip(2), linOps: none, wIn: 1988,
			graphs: []string{"XNNGraph 5/2"}},
		// The partitioner without its gemm configs: XNNPACK transposes the weights and runs
		// the ReLU and the multiply; both linears are portable kernels. fc1's weight reaches
		// addmm through delegate 0 (a transpose of constants only), so it counts outside;
		// fc2's goes through delegate 1 together with activations and stays inside.
		"coverage/linear-xnnpack-cpu.pte": {delegateCalls: 2, opsIn: ip(4), opsOut: 2, linIn: ip(0), linOut: 2,
			linOps: map[string]int{"aten::addmm.out": 1, "aten::mm.out": 1}, wIn: 4100, wOut: 8448, linW: 8448,
			graphs: []string{"XNNGraph 1/0", "XNNGraph 3/0"}},
		"coverage/linear-vulkan.pte": {delegateCalls: 1, opsIn: ip(5), linIn: ip(2), linOps: none, wIn: 12548,
			graphs: []string{"VkGraph 5/2"}},
		"add.pte":                              {opsIn: ip(0), opsOut: 1, linIn: ip(0), linOps: none},
		"ModuleLinear-no-constant-segment.pte": {opsIn: ip(0), opsOut: 2, linIn: ip(0), linOps: none, wOut: 32},
		// Cortex-M int8 kernels, no delegate: its one linear is a CPU kernel.
		"arduino_keyword_spotting.pte": {opsIn: ip(0), opsOut: 16, linIn: ip(0), linOut: 1,
			linOps: map[string]int{"cortex_m::quantized_linear.out": 1}, wOut: 28976, linW: 816},
		// QNN context binaries are opaque: the blob is the weight inside, its operators unknown.
		"stories260k_hybrid_llama_qnn.pte": {methodName: "kv_forward", delegateCalls: 1, linOps: none, wIn: 1331456,
			graphs: []string{""}},
	}
	for name, w := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := pte.OpenFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			method := "forward"
			if w.methodName != "" {
				method = w.methodName
			}
			m := p.Method(method)
			c := p.Coverage(m)
			got := coverageWant{delegateCalls: c.DelegateCalls, opsIn: c.OperatorsInside, opsOut: c.OperatorsOutside,
				linIn: c.LinearsInside, linOut: c.LinearsOutside, linOps: c.LinearOperatorsOutside,
				wIn: c.WeightBytesInside, wOut: c.WeightBytesOutside, linW: c.LinearWeightBytesOutside,
				outside: w.outside, graphs: w.graphs, methodName: w.methodName}
			if w.outside != nil {
				got.outside = c.Outside
			}
			if w.graphs != nil {
				got.graphs = nil
				for _, d := range m.Delegates {
					got.graphs = append(got.graphs, graphSummary(d))
				}
			}
			if d := cmp.Diff(w, got, cmp.AllowUnexported(coverageWant{})); d != "" {
				t.Errorf("coverage (-want +got):\n%s", d)
			}
			checkShares(t, c)
		})
	}
}

func graphSummary(d pte.Delegate) string {
	if d.Graph == nil {
		return d.GraphError
	}
	return fmt.Sprintf("%s %d/%d", d.Graph.Format, d.Graph.Nodes, d.Graph.Linears)
}

// checkShares checks the shares against the counts they come from.
func checkShares(t *testing.T, c pte.Coverage) {
	t.Helper()
	if c.OperatorsInside == nil {
		if c.OperatorShareInside != nil {
			t.Errorf("operator share %v without a count inside", *c.OperatorShareInside)
		}
	} else if n := c.Operators(); n > 0 && (c.OperatorShareInside == nil || *c.OperatorShareInside != float64(*c.OperatorsInside)/float64(n)) {
		t.Errorf("operator share %v, want %d/%d", c.OperatorShareInside, *c.OperatorsInside, n)
	}
	if w := c.WeightBytes(); w > 0 && (c.WeightShareInside == nil || *c.WeightShareInside != float64(c.WeightBytesInside)/float64(w)) {
		t.Errorf("weight share %v, want %d/%d", c.WeightShareInside, c.WeightBytesInside, w)
	} else if w == 0 && c.WeightShareInside != nil {
		t.Errorf("weight share %v without weights", *c.WeightShareInside)
	}
}

// TestCoverageBuilt measures ptetest's shapes: the stand-in LLMs' graphs load their
// weights from named data, QNN and MediaTek payloads are opaque, and linears left to the
// CPU are counted whatever the backend.
func TestCoverageBuilt(t *testing.T) {
	md := ptetest.ExportLLMMetadata(128, 256, 1, []int64{2})
	xnn, err := ptetest.LLM{Backend: "xnnpack", WeightsSize: 1 << 20, Metadata: md}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	c := open(t, xnn).Coverages()
	if len(c) != 1 || c[0].Method != "forward" || *c[0].OperatorsInside != 1 || *c[0].LinearsInside != 1 ||
		c[0].WeightBytesInside != 1<<20 || c[0].WeightBytesOutside != 0 || c[0].LinearsOutside != 0 {
		t.Errorf("xnnpack stand-in coverage %+v", c)
	}

	chunk, err := ptetest.MediaTekChunk{Exp: "e_A16W4_1_chunks", PromptTokens: 32, Window: 128, WeightsSize: 4096}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range open(t, chunk).Coverages() {
		// The blob (4096 or 4224 bytes) and the shared weights in named data (4096).
		if c.OperatorsInside != nil || c.WeightBytesInside < 8192 || c.WeightBytesInside > 8320 {
			t.Errorf("MediaTek %s coverage %+v", c.Method, c)
		}
	}

	qnn := ptetest.Spec{Methods: []ptetest.Method{{Name: "kv_forward", Backend: pte.QnnBackend,
		Blob: ptetest.QNNBlob(4096), CPULinears: 3}}}
	c = open(t, qnn).Coverages()
	if len(c) != 1 || c[0].LinearsOutside != 3 || c[0].LinearsInside != nil || c[0].OperatorsOutside != 3 ||
		c[0].LinearOperatorsOutside["aten::linear.out"] != 3 || c[0].WeightBytesInside != 4096 {
		t.Errorf("QNN with CPU linears: %+v", c)
	}
}

// TestUnreadableGraph: an XH00 payload whose graph lies past the blob still opens (the
// program is sound); the delegate says why its graph is unknown and counts as opaque.
func TestUnreadableGraph(t *testing.T) {
	blob := ptetest.XNNPACKBlob(512)
	binary.LittleEndian.PutUint32(blob.Head[14:], 1<<20)
	p := open(t, ptetest.Spec{Methods: []ptetest.Method{{Name: "forward", Backend: pte.XnnpackBackend, Blob: blob}}})
	d := p.Method("forward").Delegates[0]
	if d.Graph != nil || d.GraphError != "graph: bytes 32..1048608 lie outside the 512-byte payload" {
		t.Errorf("graph %+v, error %q", d.Graph, d.GraphError)
	}
	c := p.Coverage(p.Method("forward"))
	if c.OperatorsInside != nil || c.LinearsInside != nil || c.WeightBytesInside != 512 {
		t.Errorf("coverage %+v", c)
	}
}

func TestLinearOp(t *testing.T) {
	for name, want := range map[string]bool{
		"aten::linear": true, "aten::mm": true, "aten::addmm": true, "aten::bmm": true, "aten::baddbmm": true,
		"aten::matmul": true, "aten::_weight_int8pack_mm": true, "cortex_m::quantized_linear": true,
		"torchao::_linear_8bit_act_4bit_weight": true, "aten.linear.default": true,
		"et_vk.linear_qcs4w.default": true, "aten.mm.default": true,
		"aten::upsample_bilinear2d": false, "aten::add": false, "llama::custom_sdpa": false,
		"quantized_decomposed::embedding_byte": false, "et_vk.prepack.default": false, "aten::permute_copy": false,
		"aten::mean": false, "executorch_prim::et_view": false,
	} {
		if got := pte.LinearOp(name); got != want {
			t.Errorf("LinearOp(%q) = %v, want %v", name, got, want)
		}
	}
}
