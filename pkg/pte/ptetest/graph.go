package ptetest

import (
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// Graph is what a stand-in XNNPACK or Vulkan payload says runs inside it, written as the
// real XNNGraph / VkGraph flatbuffer so that pkg/pte reads it as it reads a real one.
type Graph struct {
	// Ops are XNNPACK node types without the XNN prefix (FullyConnected, Add, ...) or
	// Vulkan operator names (aten.linear.default, ...), one node each.
	Ops []string
	// Named are the named-data entries the graph loads its constants from.
	Named []NamedConst
	// Inputs and Outputs are the graph's external values (default 1 each, as a built
	// method's DelegateCall passes one input and one output).
	Inputs, Outputs int
}

// NamedConst is one constant a graph loads from named data.
type NamedConst struct {
	Key  string
	Size int64
}

// xnnNodeTypes are the XNodeUnion tags of backends/xnnpack/serialization/schema.fbs.
var xnnNodeTypes = map[string]byte{"Add": 1, "FullyConnected": 2, "Softmax": 3, "Sigmoid": 4,
	"StaticTranspose": 5, "Clamp": 6, "Conv2d": 7, "Multiply": 15, "Convert": 18,
	"StaticReshape": 20, "BatchMatrixMultiply": 37}

// XNNPACKBlob is a blob laid out like XnnpackBackend's payload (XH00 header, then an
// XNNGraph with identifier XN01) whose graph is one FullyConnected node.
func XNNPACKBlob(size int64) Blob {
	return XNNPACKGraphBlob(size, Graph{Ops: []string{"FullyConnected"}})
}

// VulkanBlob is a blob laid out like VulkanBackend's payload (VH00 header, then a VkGraph
// with identifier VK00) whose graph is one aten.linear.default call.
func VulkanBlob(size int64) Blob {
	return VulkanGraphBlob(size, Graph{Ops: []string{"aten.linear.default"}})
}

// XNNPACKGraphBlob is an XNNPACK payload holding g.
func XNNPACKGraphBlob(size int64, g Graph) Blob {
	b := flatbuffers.NewBuilder(256)
	var nodes []uoff
	for _, op := range g.Ops {
		tag, ok := xnnNodeTypes[op]
		if !ok {
			panic(fmt.Sprintf("ptetest: no XNNPACK node type %q", op))
		}
		b.StartObject(5)
		node := b.EndObject()
		b.StartObject(4)
		b.PrependByteSlot(0, tag, 0)
		b.PrependUOffsetTSlot(1, node, 0)
		nodes = append(nodes, b.EndObject())
	}
	return graphBlob(b, "XH00", "XN01", size, g, func(ins, outs, consts uoff) {
		nodeVec := b.CreateVectorOfTables(nodes)
		b.StartObject(9)
		b.PrependUOffsetTSlot(1, nodeVec, 0)
		b.PrependUint32Slot(3, uint32(g.inputs()+g.outputs()), 0)
		b.PrependUOffsetTSlot(4, ins, 0)
		b.PrependUOffsetTSlot(5, outs, 0)
		b.PrependUOffsetTSlot(8, consts, 0)
	})
}

// VulkanGraphBlob is a Vulkan payload holding g.
func VulkanGraphBlob(size int64, g Graph) Blob {
	b := flatbuffers.NewBuilder(256)
	var calls []uoff
	for i, op := range g.Ops {
		name := b.CreateString(op)
		b.StartObject(3)
		b.PrependUint32Slot(0, uint32(i), 0)
		b.PrependUOffsetTSlot(1, name, 0)
		calls = append(calls, b.EndObject())
	}
	return graphBlob(b, "VH00", "VK00", size, g, func(ins, outs, consts uoff) {
		chain := b.CreateVectorOfTables(calls)
		b.StartObject(9)
		b.PrependUOffsetTSlot(1, chain, 0)
		b.PrependUOffsetTSlot(3, ins, 0)
		b.PrependUOffsetTSlot(4, outs, 0)
		b.PrependUOffsetTSlot(5, consts, 0)
	})
}

func (g Graph) inputs() int {
	if g.Inputs == 0 {
		return 1
	}
	return g.Inputs
}

func (g Graph) outputs() int {
	if g.Outputs == 0 {
		return 1
	}
	return g.Outputs
}

// graphBlob finishes the graph table (root starts it, given the input ids, output ids and
// constants vectors) and lays out the payload: the 30-byte header, the flatbuffer at 32,
// and zeros up to size as the constant data.
func graphBlob(b *flatbuffers.Builder, magic, ident string, size int64, g Graph, root func(ins, outs, consts uoff)) Blob {
	var consts []uoff
	// Entry 0 is reserved for non-constant values, as the serializers write it.
	for _, c := range append([]NamedConst{{}}, g.Named...) {
		var key uoff
		if c.Key != "" {
			key = b.CreateString(c.Key)
		}
		b.StartObject(3)
		if c.Key != "" {
			b.PrependUint64Slot(0, ^uint64(0), 0)
			b.PrependUOffsetTSlot(2, key, 0)
		}
		b.PrependUint64Slot(1, uint64(c.Size), 0)
		consts = append(consts, b.EndObject())
	}
	ids := func(from, n int) uoff {
		b.StartVector(4, n, 4)
		for i := n - 1; i >= 0; i-- {
			b.PrependUint32(uint32(from + i))
		}
		return b.EndVector(n)
	}
	ins, outs := ids(0, g.inputs()), ids(g.inputs(), g.outputs())
	constVec := b.CreateVectorOfTables(consts)
	root(ins, outs, constVec)
	b.FinishWithFileIdentifier(b.EndObject(), []byte(ident))
	fb := b.FinishedBytes()

	const fbOff = 32
	dataOff := align(fbOff+int64(len(fb)), 16)
	size = max(size, dataOff)
	h := make([]byte, dataOff)
	copy(h[4:], magic)
	binary.LittleEndian.PutUint16(h[8:], 30)
	binary.LittleEndian.PutUint32(h[10:], fbOff)
	binary.LittleEndian.PutUint32(h[14:], uint32(len(fb)))
	binary.LittleEndian.PutUint32(h[18:], uint32(dataOff))
	binary.LittleEndian.PutUint64(h[22:], uint64(size-dataOff))
	copy(h[fbOff:], fb)
	return Blob{Head: h, Size: size}
}
