package ptetest

import (
	"fmt"
	"strings"
)

// EValue union tags and instruction tags used here (schema order).
const (
	tagInt, tagBool, tagDouble, tagTensor, tagString = 2, 3, 4, 5, 6
	instrKernel, instrDelegate                       = 1, 2
)

// method writes a real method: tensors in, tensor out, one delegate or kernel call.
func (pb *programBuilder) method(m Method, ref blobRef) uoff {
	b := pb.b
	name := b.CreateString(m.Name)
	meta := pb.container(`[1, {"type": "builtins.tuple", "context": "null", "children_spec": []}]`,
		`[1, {"type": null, "context": null, "children_spec": []}]`)
	var values, instrs []uoff
	var ops, dels uoff
	if m.Backend == "" {
		for i := 0; i < 2; i++ {
			values = append(values, pb.tensorValue(int64(i)*64))
		}
		values = append(values, pb.scalarValue(tagInt, func() { b.PrependInt64Slot(0, 1, 0) }))
		values = append(values, pb.tensorValue(128))
		instrs = []uoff{pb.instruction(instrKernel, 0, []int32{0, 1, 2, 3, 3})}
		ops = pb.operator("aten::add", "out")
		dels = b.CreateVectorOfTables(nil)
	} else {
		values = append(values, pb.tensorValue(0), pb.tensorValue(64))
		if !m.NoCall {
			instrs = []uoff{pb.instruction(instrDelegate, m.CallIndex, []int32{0, 1})}
		}
		ops = b.CreateVectorOfTables(nil)
		if m.CPULinears > 0 {
			ops = pb.operator("aten::linear", "out")
		}
		for i := 0; i < m.CPULinears; i++ {
			instrs = append(instrs, pb.instruction(instrKernel, 0, []int32{1, 1, 1}))
		}
		dels = pb.delegate(m, ref)
	}
	in, out := []int32{0}, []int32{int32(len(values) - 1)}
	if m.Backend == "" {
		in = []int32{0, 1}
	}
	planned := int64(192)
	for _, p := range m.Planned {
		values = append(values, pb.plannedValue(p, planned))
		planned += p.bytes()
	}
	return pb.executionPlan(name, meta, values, in, out, instrs, ops, dels, []int64{0, planned})
}

// plannedValue writes a planned tensor of p's type and sizes at a memory offset.
func (pb *programBuilder) plannedValue(p Planned, offset int64) uoff {
	b := pb.b
	sizes := i32Vec(b, p.Sizes)
	order := make([]byte, len(p.Sizes))
	for i := range order {
		order[i] = byte(i)
	}
	dimOrder := b.CreateByteVector(order)
	b.StartObject(3)
	b.PrependUint32Slot(0, 1, 0)
	b.PrependUint32Slot(1, uint32(offset), 0)
	b.PrependUint32Slot(2, uint32(offset>>32), 0)
	alloc := b.EndObject()
	b.StartObject(10)
	b.PrependInt8Slot(0, p.ScalarType, 0)
	b.PrependUOffsetTSlot(2, sizes, 0)
	b.PrependUOffsetTSlot(3, dimOrder, 0)
	b.PrependUOffsetTSlot(6, alloc, 0)
	return pb.evalue(tagTensor, b.EndObject())
}

// constantMethod writes a metadata getter as _emit_prim_getters does: one value per leaf,
// no inputs, outputs 0..n-1, one chain without instructions.
func (pb *programBuilder) constantMethod(md Meta) (uoff, error) {
	leaves, err := flatten(md.Value)
	if err != nil {
		return 0, err
	}
	b := pb.b
	name := b.CreateString(md.Name)
	spec := `[1, {"type": null, "context": null, "children_spec": []}]`
	if isSlice(md.Value) {
		spec = fmt.Sprintf(`[1, {"type": "builtins.list", "context": "null", "children_spec": [%s]}]`,
			strings.TrimSuffix(strings.Repeat(`{"type": null, "context": null, "children_spec": []}, `, len(leaves)), ", "))
	}
	meta := pb.container("", spec)
	values := make([]uoff, len(leaves))
	outs := make([]int32, len(leaves))
	for i, l := range leaves {
		values[i] = pb.leaf(l)
		outs[i] = int32(i)
	}
	empty := b.CreateVectorOfTables(nil)
	return pb.executionPlan(name, meta, values, nil, outs, nil, empty, b.CreateVectorOfTables(nil), []int64{0}), nil
}

func isSlice(v any) bool {
	switch v.(type) {
	case []int, []int64, []float64, []bool:
		return true
	}
	return false
}

func flatten(v any) ([]any, error) {
	switch x := v.(type) {
	case int:
		return []any{int64(x)}, nil
	case int32:
		return []any{int64(x)}, nil
	case int64, bool, float64, string:
		return []any{x}, nil
	case []int:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = int64(e)
		}
		return out, nil
	case []int64:
		return anySlice(x), nil
	case []float64:
		return anySlice(x), nil
	case []bool:
		return anySlice(x), nil
	}
	return nil, fmt.Errorf("unsupported metadata value %T", v)
}

func anySlice[T any](v []T) []any {
	out := make([]any, len(v))
	for i, e := range v {
		out[i] = e
	}
	return out
}

func (pb *programBuilder) leaf(l any) uoff {
	b := pb.b
	switch x := l.(type) {
	case int64:
		return pb.scalarValue(tagInt, func() { b.PrependInt64Slot(0, x, 0) })
	case bool:
		return pb.scalarValue(tagBool, func() { b.PrependBoolSlot(0, x, false) })
	case float64:
		return pb.scalarValue(tagDouble, func() { b.PrependFloat64Slot(0, x, 0) })
	default:
		s := b.CreateString(x.(string))
		return pb.scalarValue(tagString, func() { b.PrependUOffsetTSlot(0, s, 0) })
	}
}

// scalarValue writes an EValue whose payload table has one field, set by field.
func (pb *programBuilder) scalarValue(tag byte, field func()) uoff {
	b := pb.b
	b.StartObject(1)
	field()
	val := b.EndObject()
	return pb.evalue(tag, val)
}

func (pb *programBuilder) evalue(tag byte, val uoff) uoff {
	b := pb.b
	b.StartObject(2)
	b.PrependByteSlot(0, tag, 0)
	b.PrependUOffsetTSlot(1, val, 0)
	return b.EndObject()
}

// tensorValue writes a planned float32 [1, 16] activation at a memory offset.
func (pb *programBuilder) tensorValue(offset int64) uoff {
	b := pb.b
	sizes := i32Vec(b, []int32{1, 16})
	dimOrder := b.CreateByteVector([]byte{0, 1})
	b.StartObject(3)
	b.PrependUint32Slot(0, 1, 0)
	b.PrependUint32Slot(1, uint32(offset), 0)
	alloc := b.EndObject()
	b.StartObject(10)
	b.PrependInt8Slot(0, 6, 0)
	b.PrependUOffsetTSlot(2, sizes, 0)
	b.PrependUOffsetTSlot(3, dimOrder, 0)
	b.PrependUOffsetTSlot(6, alloc, 0)
	return pb.evalue(tagTensor, b.EndObject())
}

func (pb *programBuilder) container(in, out string) uoff {
	b := pb.b
	i, o := b.CreateString(in), b.CreateString(out)
	b.StartObject(2)
	b.PrependUOffsetTSlot(0, i, 0)
	b.PrependUOffsetTSlot(1, o, 0)
	return b.EndObject()
}

func (pb *programBuilder) instruction(tag byte, index int32, args []int32) uoff {
	b := pb.b
	argv := i32Vec(b, args)
	b.StartObject(2)
	b.PrependInt32Slot(0, index, -1)
	b.PrependUOffsetTSlot(1, argv, 0)
	call := b.EndObject()
	b.StartObject(2)
	b.PrependByteSlot(0, tag, 0)
	b.PrependUOffsetTSlot(1, call, 0)
	return b.EndObject()
}

// operator writes an operators vector holding one operator.
func (pb *programBuilder) operator(opName, opOverload string) uoff {
	b := pb.b
	name, overload := b.CreateString(opName), b.CreateString(opOverload)
	b.StartObject(2)
	b.PrependUOffsetTSlot(0, name, 0)
	b.PrependUOffsetTSlot(1, overload, 0)
	return b.CreateVectorOfTables([]uoff{b.EndObject()})
}

func (pb *programBuilder) delegate(m Method, ref blobRef) uoff {
	b := pb.b
	var specs []uoff
	for _, cs := range m.CompileSpecs {
		k, v := b.CreateString(cs.Key), b.CreateByteVector(cs.Value)
		b.StartObject(2)
		b.PrependUOffsetTSlot(0, k, 0)
		b.PrependUOffsetTSlot(1, v, 0)
		specs = append(specs, b.EndObject())
	}
	specVec := b.CreateVectorOfTables(specs)
	id := b.CreateString(m.Backend)
	b.StartObject(2)
	loc := byte(1)
	if ref.inline {
		loc = 0
	}
	index := ref.index
	if m.BadBlobIndex != 0 {
		index = m.BadBlobIndex
	}
	b.PrependByteSlot(0, loc, 0)
	b.PrependUint32Slot(1, index, 0)
	processed := b.EndObject()
	b.StartObject(3)
	b.PrependUOffsetTSlot(0, id, 0)
	b.PrependUOffsetTSlot(1, processed, 0)
	b.PrependUOffsetTSlot(2, specVec, 0)
	return b.CreateVectorOfTables([]uoff{b.EndObject()})
}

// plan writes an ExecutionPlan with one chain holding instrs.
func (pb *programBuilder) executionPlan(name, meta uoff, values []uoff, in, out []int32, instrs []uoff,
	ops, dels uoff, bufSizes []int64) uoff {
	b := pb.b
	valVec := b.CreateVectorOfTables(values)
	inVec, outVec := i32Vec(b, in), i32Vec(b, out)
	chain := pb.chain(in, out, instrs)
	chains := b.CreateVectorOfTables([]uoff{chain})
	sizes := i64Vec(b, bufSizes)
	b.StartObject(9)
	b.PrependUOffsetTSlot(0, name, 0)
	b.PrependUOffsetTSlot(1, meta, 0)
	b.PrependUOffsetTSlot(2, valVec, 0)
	b.PrependUOffsetTSlot(3, inVec, 0)
	b.PrependUOffsetTSlot(4, outVec, 0)
	b.PrependUOffsetTSlot(5, chains, 0)
	b.PrependUOffsetTSlot(6, ops, 0)
	b.PrependUOffsetTSlot(7, dels, 0)
	b.PrependUOffsetTSlot(8, sizes, 0)
	return b.EndObject()
}

func (pb *programBuilder) chain(in, out []int32, instrs []uoff) uoff {
	b := pb.b
	inVec, outVec := i32Vec(b, in), i32Vec(b, out)
	instrVec := b.CreateVectorOfTables(instrs)
	b.StartObject(4)
	b.PrependUOffsetTSlot(0, inVec, 0)
	b.PrependUOffsetTSlot(1, outVec, 0)
	b.PrependUOffsetTSlot(2, instrVec, 0)
	return b.EndObject()
}
