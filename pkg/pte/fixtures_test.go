package pte_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/google/go-cmp/cmp"
)

// want describes a fixture as its README (written from the upstream sources) states it.
type want struct {
	size                    int64
	header                  *pte.ExtendedHeader
	inputs, outputs, values int
	kernelCalls             int
	ops                     []string
	segments                []pte.DataSegment
	constOffsets            int
	constantBuffers         int
	inputSpecPrefix         string
	nonConstBufferSizes     []int64
	firstTensorSizes        []int32
	firstTensorType         pte.ScalarType
}

func TestFixtures(t *testing.T) {
	tests := map[string]want{
		"add.pte": {
			size: 728, inputs: 2, outputs: 1, values: 4, kernelCalls: 1,
			ops:      []string{"aten::add.out"},
			segments: []pte.DataSegment{{Offset: 0, Size: 0}}, constOffsets: 1,
			inputSpecPrefix: "T2#2#0(", nonConstBufferSizes: []int64{0, 48},
			firstTensorSizes: []int32{1}, firstTensorType: 6,
		},
		"ModuleLinear-no-constant-segment.pte": {
			size: 1040, inputs: 1, outputs: 1, values: 6, kernelCalls: 2,
			ops:             []string{"aten::mul.out", "aten::add.out"},
			constantBuffers: 3, inputSpecPrefix: "T2#1#0(", nonConstBufferSizes: []int64{0, 32},
			firstTensorSizes: []int32{2, 2}, firstTensorType: 6,
		},
		"arduino_add_model.pte": {
			size:   1156,
			header: &pte.ExtendedHeader{Length: 32, ProgramSize: 1040, SegmentBaseOffset: 1152, SegmentDataSize: 4},
			inputs: 1, outputs: 1, values: 4, kernelCalls: 1, ops: []string{"aten::add.out"},
			segments:     []pte.DataSegment{{Offset: 0, Size: 4, FileOffset: 1152}},
			constOffsets: 2, inputSpecPrefix: `[1, {"type": "builtins.tuple"`,
			nonConstBufferSizes: []int64{0, 32},
		},
		"arduino_keyword_spotting.pte": {
			size:   54192,
			header: &pte.ExtendedHeader{Length: 32, ProgramSize: 14904, SegmentBaseOffset: 14976, SegmentDataSize: 39216},
			inputs: 1, outputs: 1, values: 289, kernelCalls: 16,
			segments:     []pte.DataSegment{{Offset: 0, Size: 39216, FileOffset: 14976}},
			constOffsets: 64, inputSpecPrefix: `[1, {"type": "builtins.tuple"`,
			nonConstBufferSizes: []int64{0, 16000},
		},
	}
	for name, w := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := pte.OpenFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, p, w)
		})
	}
}

func checkFixture(t *testing.T, p *pte.Program, w want) {
	t.Helper()
	if p.Size != w.size {
		t.Errorf("size %d, want %d", p.Size, w.size)
	}
	if diff := cmp.Diff(w.header, p.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if got := p.MethodNames(); !cmp.Equal(got, []string{"forward"}) {
		t.Fatalf("methods %v, want [forward]", got)
	}
	m := p.Method("forward")
	if len(m.Inputs) != w.inputs || len(m.Outputs) != w.outputs || len(m.Values) != w.values {
		t.Errorf("inputs/outputs/values %d/%d/%d, want %d/%d/%d",
			len(m.Inputs), len(m.Outputs), len(m.Values), w.inputs, w.outputs, w.values)
	}
	if n := m.Count(pte.InstrKernelCall); n != w.kernelCalls || n != m.InstructionCount() {
		t.Errorf("kernel calls %d of %d instructions, want %d", n, m.InstructionCount(), w.kernelCalls)
	}
	if w.ops != nil {
		var ops []string
		for _, o := range m.Operators {
			ops = append(ops, o.Name+"."+o.Overload)
		}
		if !cmp.Equal(ops, w.ops) {
			t.Errorf("operators %v, want %v", ops, w.ops)
		}
	}
	if len(m.Delegates) != 0 || m.IsConstant() {
		t.Errorf("forward: %d delegates, constant %v; want a plain method", len(m.Delegates), m.IsConstant())
	}
	if diff := cmp.Diff(w.segments, p.Segments); diff != "" {
		t.Errorf("segments (-want +got):\n%s", diff)
	}
	if got := constOffsets(p); got != w.constOffsets {
		t.Errorf("constant segment offsets %d, want %d", got, w.constOffsets)
	}
	if len(p.ConstantBuffers) != w.constantBuffers {
		t.Errorf("constant buffers %d, want %d", len(p.ConstantBuffers), w.constantBuffers)
	}
	if !strings.HasPrefix(m.InputSpec, w.inputSpecPrefix) {
		t.Errorf("input spec %q, want prefix %q", m.InputSpec, w.inputSpecPrefix)
	}
	if !cmp.Equal(m.NonConstBufferSizes, w.nonConstBufferSizes) {
		t.Errorf("non_const_buffer_sizes %v, want %v", m.NonConstBufferSizes, w.nonConstBufferSizes)
	}
	if w.firstTensorSizes != nil {
		ten := m.Values[0].Tensor
		if ten == nil || !cmp.Equal(ten.Sizes, w.firstTensorSizes) || ten.ScalarType != w.firstTensorType {
			t.Errorf("values[0] tensor %+v, want %v sizes %v", ten, w.firstTensorType, w.firstTensorSizes)
		}
	}
	if md := p.Metadata(); len(md) != 0 {
		t.Errorf("metadata %v, want none", md)
	}
}

func constOffsets(p *pte.Program) int {
	if p.ConstantSegment == nil {
		return 0
	}
	return len(p.ConstantSegment.Offsets)
}

// TestKeywordSpottingOperators checks the operator table of the largest fixture, whose
// names come from several namespaces.
func TestKeywordSpottingOperators(t *testing.T) {
	p, err := pte.OpenFile("testdata/arduino_keyword_spotting.pte")
	if err != nil {
		t.Fatal(err)
	}
	m := p.Method("forward")
	names := map[string]bool{}
	for _, in := range m.Chains[0].Instructions {
		op := m.Operators[in.Index]
		names[op.Name] = true
	}
	for _, want := range []string{"cortex_m::quantized_conv2d", "cortex_m::quantized_linear",
		"dim_order_ops::_clone_dim_order", "cortex_m::quantize_per_tensor"} {
		if !names[want] {
			t.Errorf("operator %s not called; called %v", want, names)
		}
	}
	consts := 0
	for _, v := range m.Values {
		if v.Kind == pte.KindTensor && v.Tensor.DataBufferIdx > 0 {
			consts++
			if int(v.Tensor.DataBufferIdx) >= len(p.ConstantSegment.Offsets) {
				t.Errorf("tensor constant index %d beyond %d offsets", v.Tensor.DataBufferIdx, len(p.ConstantSegment.Offsets))
			}
		}
	}
	if consts == 0 {
		t.Error("no constant tensors found")
	}
}
