package cli

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// inspectView is what inspect prints, in text or as JSON.
type inspectView struct {
	File        string        `json:"file"`
	Size        int64         `json:"size"`
	Identifier  string        `json:"identifier"`
	Header      *headerView   `json:"extended_header"`
	ProgramSize int64         `json:"program_size"`
	Methods     []methodView  `json:"methods"`
	Metadata    pte.Metadata  `json:"metadata"`
	Segments    []segmentView `json:"segments"`
	Named       []namedView   `json:"named_data"`
	ConstBufs   int           `json:"legacy_constant_buffers"`
	Check       *check.Result `json:"check,omitempty"`
}

type headerView struct {
	Length            uint32 `json:"length"`
	ProgramSize       uint64 `json:"program_size"`
	SegmentBaseOffset uint64 `json:"segment_base_offset"`
	SegmentDataSize   uint64 `json:"segment_data_size"`
}

type methodView struct {
	Name          string         `json:"name"`
	Constant      bool           `json:"constant"`
	Inputs        int            `json:"inputs"`
	Outputs       int            `json:"outputs"`
	Values        int            `json:"values"`
	Instructions  int            `json:"instructions"`
	KernelCalls   int            `json:"kernel_calls"`
	DelegateCalls int            `json:"delegate_calls"`
	Backends      []string       `json:"backends"`
	Operators     []string       `json:"operators"`
	Delegates     []delegateView `json:"delegates"`
	// Coverage is how much of the method runs inside its delegates (nil for a getter).
	Coverage *pte.Coverage `json:"delegate_coverage,omitempty"`
}

type delegateView struct {
	ID           string            `json:"id"`
	Location     string            `json:"location"`
	Index        uint32            `json:"index"`
	Offset       int64             `json:"offset"`
	Size         int64             `json:"size"`
	Signature    string            `json:"signature"`
	CompileSpecs map[string]string `json:"compile_specs"`
	// Graph is what runs inside an XNNPACK or Vulkan delegate; GraphError says why it
	// could not be read.
	Graph      *graphView `json:"graph,omitempty"`
	GraphError string     `json:"graph_error,omitempty"`
}

type graphView struct {
	Format        string           `json:"format"`
	Inputs        int              `json:"inputs"`
	Outputs       int              `json:"outputs"`
	Nodes         int              `json:"nodes"`
	Linears       int              `json:"linears"`
	Ops           map[string]int   `json:"ops"`
	ConstantBytes int64            `json:"constant_bytes"`
	Named         map[string]int64 `json:"named_data"`
}

type segmentView struct {
	Index      int    `json:"index"`
	Offset     uint64 `json:"offset"`
	Size       uint64 `json:"size"`
	FileOffset int64  `json:"file_offset"`
	Role       string `json:"role"`
}

type namedView struct {
	Key     string `json:"key"`
	Segment uint32 `json:"segment"`
}

func newInspectView(name string, p *pte.Program) *inspectView {
	v := &inspectView{File: name, Size: p.Size, Identifier: pte.FileIdentifier, ProgramSize: p.ProgramSize,
		Metadata: p.Metadata(), ConstBufs: len(p.ConstantBuffers), Methods: []methodView{},
		Segments: []segmentView{}, Named: []namedView{}}
	if h := p.Header; h != nil {
		v.Header = &headerView{h.Length, h.ProgramSize, h.SegmentBaseOffset, h.SegmentDataSize}
	}
	for i := range p.Methods {
		mv := newMethodView(&p.Methods[i])
		if !mv.Constant {
			c := p.Coverage(&p.Methods[i])
			mv.Coverage = &c
		}
		v.Methods = append(v.Methods, mv)
	}
	roles := segmentRoles(p)
	for i, s := range p.Segments {
		v.Segments = append(v.Segments, segmentView{i, s.Offset, s.Size, s.FileOffset, roles[i]})
	}
	for _, nd := range p.NamedData {
		v.Named = append(v.Named, namedView{nd.Key, nd.SegmentIndex})
	}
	return v
}

func newMethodView(m *pte.Method) methodView {
	mv := methodView{Name: m.Name, Constant: m.IsConstant(), Inputs: len(m.Inputs), Outputs: len(m.Outputs),
		Values: len(m.Values), Instructions: m.InstructionCount(), KernelCalls: m.Count(pte.InstrKernelCall),
		DelegateCalls: m.Count(pte.InstrDelegateCall), Backends: m.Backends(), Operators: []string{},
		Delegates: []delegateView{}}
	if mv.Backends == nil {
		mv.Backends = []string{}
	}
	for _, op := range m.Operators {
		name := op.Name
		if op.Overload != "" {
			name += "." + op.Overload
		}
		mv.Operators = append(mv.Operators, name)
	}
	for _, d := range m.Delegates {
		specs := map[string]string{}
		for _, cs := range d.CompileSpecs {
			specs[cs.Key] = specValue(cs.Value)
		}
		dv := delegateView{ID: d.ID, Location: d.Location.String(), Index: d.Index, Offset: d.BlobOffset,
			Size: d.BlobSize, Signature: d.Signature, CompileSpecs: specs, GraphError: d.GraphError}
		if g := d.Graph; g != nil {
			dv.Graph = &graphView{g.Format, g.Inputs, g.Outputs, g.Nodes, g.Linears, g.Ops, g.ConstantBytes, g.Named}
		}
		mv.Delegates = append(mv.Delegates, dv)
	}
	return mv
}

// specValue shows a compile-spec value as text when it is printable, else as (short) hex.
func specValue(b []byte) string {
	printable := len(b) > 0
	for _, r := range string(b) {
		printable = printable && r < unicode.MaxASCII && unicode.IsPrint(r)
	}
	if printable {
		return string(b)
	}
	if len(b) > 16 {
		return fmt.Sprintf("0x%s… (%d bytes)", hex.EncodeToString(b[:16]), len(b))
	}
	return "0x" + hex.EncodeToString(b)
}

// segmentRoles says what each segment holds, from the references to it.
func segmentRoles(p *pte.Program) map[int]string {
	roles := map[int][]string{}
	add := func(i int, role string) {
		if !slices.Contains(roles[i], role) {
			roles[i] = append(roles[i], role)
		}
	}
	if cs := p.ConstantSegment; cs != nil && len(cs.Offsets) > 0 {
		add(int(cs.SegmentIndex), fmt.Sprintf("constants (%d offsets)", len(cs.Offsets)))
	}
	for i, ms := range p.MutableDataSegments {
		add(int(ms.SegmentIndex), fmt.Sprintf("mutable data %d", i))
	}
	for _, m := range p.Methods {
		for _, d := range m.Delegates {
			if d.Location == pte.Segment {
				add(int(d.Index), "delegate blob "+d.ID)
			}
		}
	}
	for _, nd := range p.NamedData {
		add(int(nd.SegmentIndex), "named data "+nd.Key)
	}
	out := map[int]string{}
	for i, r := range roles {
		out[i] = strings.Join(r, ", ")
	}
	return out
}
