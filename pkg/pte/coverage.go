package pte

import "maps"

// Coverage is how much of one method runs inside its delegates and how much falls back to
// kernels the runtime runs on the CPU (portable, optimized or custom operators called by a
// KernelCall). docs/research/pte.md (section 10) gives the definitions and the evidence.
type Coverage struct {
	Method   string   `json:"method"`
	Backends []string `json:"backends"`
	// DelegateCalls counts the method's DelegateCall instructions.
	DelegateCalls int `json:"delegate_calls"`
	// OperatorsInside counts the operators of the delegate graphs the method calls, once
	// per call; nil when a called delegate has no readable graph (QNN, NeuroPilot).
	OperatorsInside *int `json:"operators_inside"`
	// OperatorsOutside counts the KernelCall instructions; Outside counts them by operator
	// ("aten::addmm.out": 1).
	OperatorsOutside int            `json:"operators_outside"`
	Outside          map[string]int `json:"outside"`
	// LinearsInside counts the linears (FullyConnected and matrix-product nodes) of the
	// delegate graphs the method calls; nil as OperatorsInside is.
	LinearsInside *int `json:"linears_inside"`
	// LinearsOutside counts the KernelCalls to an operator LinearOp names, by operator in
	// LinearOperatorsOutside.
	LinearsOutside         int            `json:"linears_outside"`
	LinearOperatorsOutside map[string]int `json:"linear_operators_outside"`
	// WeightBytesInside is the constant data only the delegates read: their payloads'
	// constants and named data, and program constants passed to delegate calls alone.
	WeightBytesInside int64 `json:"weight_bytes_inside"`
	// WeightBytesOutside is the program's constant data a CPU kernel reads, directly or as
	// a value computed from constants only (a transposed or dequantized weight).
	WeightBytesOutside int64 `json:"weight_bytes_outside"`
	// LinearWeightBytesOutside is the part of WeightBytesOutside the linears outside read.
	LinearWeightBytesOutside int64 `json:"linear_weight_bytes_outside"`
	// OperatorShareInside is OperatorsInside over all operators (nil when unknown);
	// WeightShareInside is WeightBytesInside over all weight bytes (nil without weights).
	OperatorShareInside *float64 `json:"operator_share_inside"`
	WeightShareInside   *float64 `json:"weight_share_inside"`
}

// WeightBytes is all the constant data the method reads, inside and outside.
func (c Coverage) WeightBytes() int64 { return c.WeightBytesInside + c.WeightBytesOutside }

// Operators is all the operators the method runs, or -1 when the delegates' are unknown.
func (c Coverage) Operators() int {
	if c.OperatorsInside == nil {
		return -1
	}
	return *c.OperatorsInside + c.OperatorsOutside
}

// Coverages returns the coverage of every method that runs code (metadata getters have
// none), in program order.
func (p *Program) Coverages() []Coverage {
	out := []Coverage{}
	for i := range p.Methods {
		if m := &p.Methods[i]; !m.IsConstant() {
			out = append(out, p.Coverage(m))
		}
	}
	return out
}

// Coverage measures one method of p. Operators are counted per instruction; weights are
// constant tensors (data in the constant segment, a legacy constant buffer or a .ptd
// file, not memory-planned state), each counted once by its data.
func (p *Program) Coverage(m *Method) Coverage {
	c := Coverage{Method: m.Name, Backends: m.Backends(), Outside: map[string]int{},
		LinearOperatorsOutside: map[string]int{}}
	if c.Backends == nil {
		c.Backends = []string{}
	}
	f := newFlow(m)
	opsIn, linIn, known := 0, 0, true
	called := map[int]bool{}
	for _, ch := range m.Chains {
		for _, in := range ch.Instructions {
			switch in.Kind {
			case InstrKernelCall:
				op := m.Operators[in.Index]
				name := op.Name
				if op.Overload != "" {
					name += "." + op.Overload
				}
				c.OperatorsOutside++
				c.Outside[name]++
				linear := LinearOp(op.Name)
				if linear {
					c.LinearsOutside++
					c.LinearOperatorsOutside[name]++
				}
				for k := range f.step(in.Args) {
					f.cpu[k] = true
					if linear {
						f.linear[k] = true
					}
				}
			case InstrDelegateCall:
				c.DelegateCalls++
				called[int(in.Index)] = true
				if g := m.Delegates[in.Index].Graph; g != nil {
					opsIn += g.Nodes
					linIn += g.Linears
				} else {
					known = false
				}
				for k := range f.step(in.Args) {
					f.delegate[k] = true
				}
			case InstrMoveCall:
				f.move(in.Index, in.Target)
			}
		}
	}
	if known {
		c.OperatorsInside, c.LinearsInside = &opsIn, &linIn
		if total := opsIn + c.OperatorsOutside; total > 0 {
			share := float64(opsIn) / float64(total)
			c.OperatorShareInside = &share
		}
	}
	for k := range f.cpu {
		c.WeightBytesOutside += f.bytes[k]
	}
	for k := range f.linear {
		c.LinearWeightBytesOutside += f.bytes[k]
	}
	for k := range f.delegate {
		if !f.cpu[k] {
			c.WeightBytesInside += f.bytes[k]
		}
	}
	c.WeightBytesInside += p.delegateData(m, called)
	if total := c.WeightBytes(); total > 0 {
		share := float64(c.WeightBytesInside) / float64(total)
		c.WeightShareInside = &share
	}
	return c
}

// delegateData is the constant data the called delegates hold: a readable graph's own
// constants and the named data it loads (each key once), or, for a payload that cannot be
// read, the whole blob and the named data no readable graph of the program claims (a
// vendor backend's shared weights, as MediaTek stores them). Named data is never read by
// CPU kernels: the runtime hands it to backends only.
func (p *Program) delegateData(m *Method, called map[int]bool) int64 {
	namedSize := map[string]int64{}
	for _, nd := range p.NamedData {
		namedSize[nd.Key] = int64(p.Segments[nd.SegmentIndex].Size)
	}
	var n int64
	blobs := map[[2]int64]bool{}
	named := map[string]int64{}
	opaque := false
	for i := range m.Delegates {
		d := &m.Delegates[i]
		key := [2]int64{d.BlobOffset, d.BlobSize}
		if !called[i] || blobs[key] {
			continue
		}
		blobs[key] = true
		if d.Graph == nil {
			n += d.BlobSize
			opaque = true
			continue
		}
		n += d.Graph.ConstantBytes
		maps.Copy(named, d.Graph.Named)
	}
	if opaque {
		claimed := map[string]bool{}
		for _, pm := range p.Methods {
			for _, d := range pm.Delegates {
				if d.Graph != nil {
					for k := range d.Graph.Named {
						claimed[k] = true
					}
				}
			}
		}
		for k, size := range namedSize {
			if !claimed[k] {
				named[k] = size
			}
		}
	}
	for k, size := range named {
		if s, ok := namedSize[k]; ok {
			size = s
		}
		n += size
	}
	return n
}

// constKey names one constant's data: its constant-buffer index, or its name in a .ptd.
type constKey struct {
	buf uint32
	fqn string
}

// flow follows constants through a method's instructions in order. A value is defined
// once it is a method input, a constant, state with initial data, or written by an
// instruction (a tensor argument not yet defined is the instruction's output); an output
// is derived from constants when every tensor the instruction reads is a constant or
// itself derived, like a weight transposed or dequantized before a linear.
type flow struct {
	m       *Method
	defined []bool
	derived map[int32]map[constKey]bool
	bytes   map[constKey]int64
	// cpu, linear and delegate are the constants read by CPU kernels, by linears among
	// them, and by delegate calls.
	cpu, linear, delegate map[constKey]bool
}

func newFlow(m *Method) *flow {
	f := &flow{m: m, defined: make([]bool, len(m.Values)), derived: map[int32]map[constKey]bool{},
		bytes: map[constKey]int64{}, cpu: map[constKey]bool{}, linear: map[constKey]bool{},
		delegate: map[constKey]bool{}}
	for _, v := range m.Inputs {
		f.defined[v] = true
	}
	for i, v := range m.Values {
		if t := v.Tensor; t != nil && (t.DataBufferIdx > 0 || t.External) {
			f.defined[i] = true
			if k, ok := f.constant(int32(i)); ok {
				f.bytes[k] = t.Bytes()
			}
		}
	}
	return f
}

// constant names value v's data when v is a weight: a tensor with data in the program or
// a .ptd file that the memory planner did not place (placed ones are mutable state).
func (f *flow) constant(v int32) (constKey, bool) {
	t := f.m.Values[v].Tensor
	switch {
	case t == nil || t.Allocated:
		return constKey{}, false
	case t.External:
		return constKey{fqn: t.FullyQualifiedName}, true
	case t.DataBufferIdx > 0:
		return constKey{buf: t.DataBufferIdx}, true
	}
	return constKey{}, false
}

// tensors lists the tensor values among args, with the members of tensor lists.
func (f *flow) tensors(args []int32) []int32 {
	var out []int32
	for _, a := range args {
		v := f.m.Values[a]
		switch v.Kind {
		case KindTensor:
			out = append(out, a)
		case KindTensorList, KindOptionalTensorList:
			for _, e := range v.Ints {
				if e >= 0 && e < int64(len(f.m.Values)) && f.m.Values[e].Kind == KindTensor {
					out = append(out, int32(e))
				}
			}
		}
	}
	return out
}

// maxRoots bounds the constants one derived value is followed back to, so that a crafted
// program cannot make the walk quadratic; a real weight derives from one to three (a
// quantized weight, its scales and zero points).
const maxRoots = 64

// step runs one call over the flow and returns the constants it reads.
func (f *flow) step(args []int32) map[constKey]bool {
	var ins, outs []int32
	isOut := map[int32]bool{}
	for _, a := range f.tensors(args) {
		switch {
		case f.defined[a]:
			ins = append(ins, a)
		case !isOut[a]:
			isOut[a] = true
			outs = append(outs, a)
		}
	}
	read := map[constKey]bool{}
	fromConstants := len(ins) > 0
	for _, v := range ins {
		if k, ok := f.constant(v); ok {
			read[k] = true
		} else if r, ok := f.derived[v]; ok {
			maps.Copy(read, r)
		} else {
			fromConstants = false
		}
	}
	if len(read) > maxRoots {
		fromConstants = false
	}
	for _, o := range outs {
		f.defined[o] = true
		if fromConstants {
			f.derived[o] = read
		}
	}
	return read
}

// move follows a MoveCall: the destination holds what the source held.
func (f *flow) move(from, to int32) {
	if from < 0 || to < 0 || int(from) >= len(f.defined) || int(to) >= len(f.defined) {
		return
	}
	f.defined[to] = true
	if k, ok := f.constant(from); ok {
		f.derived[to] = map[constKey]bool{k: true}
	} else if r, ok := f.derived[from]; ok {
		f.derived[to] = r
	}
}

// elementBits is the width of each scalar type's elements (c10::ScalarType numbering).
var elementBits = map[ScalarType]int64{
	0: 8, 1: 8, 2: 16, 3: 32, 4: 64, 5: 16, 6: 32, 7: 64, 11: 8, 12: 8, 13: 8, 14: 32, 15: 16,
	16: 4, 17: 2, 22: 16, 23: 8, 24: 8, 25: 8, 26: 8, 27: 16, 28: 32, 29: 64,
}

// Bytes is the tensor's data size from its sizes and element type (0 for a type whose
// width is not known, or for sizes no file could hold).
func (t *Tensor) Bytes() int64 {
	n := int64(1)
	for _, s := range t.Sizes {
		if s < 0 || (s > 0 && n > (1<<56)/int64(s)) {
			return 0
		}
		n *= int64(s)
	}
	return (n*elementBits[t.ScalarType] + 7) / 8
}
