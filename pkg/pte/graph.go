package pte

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DelegateGraph is what a delegate's payload says runs inside it, for the backends whose
// payload format is public: XNNPACK's XNNGraph and Vulkan's VkGraph, behind the 30-byte
// XH00 / VH00 header (backends/xnnpack/serialization/schema.fbs and
// backends/vulkan/serialization/schema.fbs, unchanged from ExecuTorch's first 1.x releases through
// the one exe-expo pins; docs/research/pte.md). QNN context binaries and NeuroPilot
// networks are vendor formats, so their delegates have no graph.
type DelegateGraph struct {
	// Format is "XNNGraph" or "VkGraph".
	Format string
	// Inputs and Outputs are the graph's external inputs and outputs: a DelegateCall passes
	// Inputs values first, then Outputs.
	Inputs, Outputs int
	// Nodes is how many operators the graph runs: XNNPACK nodes, or Vulkan operator calls.
	Nodes int
	// Ops counts them by name: XNNPACK node types without their XNN prefix
	// (FullyConnected, BatchMatrixMultiply, ...), Vulkan operator names
	// (aten.linear.default, et_vk.linear_qcs4w.default, ...).
	Ops map[string]int
	// Linears is how many of the nodes multiply by a matrix: XNNPACK FullyConnected and
	// BatchMatrixMultiply nodes, Vulkan operators that LinearOp names a linear.
	Linears int
	// ConstantBytes is the constant data the payload itself carries (offsets into the data
	// after the graph, or the deprecated inline buffers).
	ConstantBytes int64
	// Named maps each named-data key the graph loads its constants from to the size it
	// states for it.
	Named map[string]int64
}

// delegateHeaderSize is the XNNPACK and Vulkan payload header: 4 zero bytes, the magic, a
// u16 header length, u32 flatbuffer offset and size, u32 constant-data offset, u64 size.
const delegateHeaderSize = 30

// MaxGraphSize bounds the graph flatbuffer read from one delegate payload. Weights live in
// named data or after the graph, so real graphs are kilobytes; a larger one is left unread.
const MaxGraphSize = 64 << 20

// xnnNodeNames are the XNodeUnion members in schema order (union tag i+1).
var xnnNodeNames = [...]string{"Add", "FullyConnected", "Softmax", "Sigmoid", "StaticTranspose",
	"Clamp", "Conv2d", "Div", "StaticResizeBilinear2D", "StaticConstantPad", "AvgPooling2d",
	"Minimum", "DepthwiseConv2d", "MaxPooling2d", "Multiply", "Subtract", "Floor", "Convert",
	"GlobalAvgPooling2d", "StaticReshape", "ArgMaxPooling2d", "SquareRoot", "Ceiling",
	"Hardswish", "LeakyReLU", "Maximum", "Negate", "Square", "ELU", "Abs", "PReLU",
	"Concatenate2", "Concatenate3", "Concatenate4", "StaticSlice", "ScaledDotProductAttention",
	"BatchMatrixMultiply", "Concatenate5", "ConvTranspose2d", "ReciprocalSquareRoot", "Log",
	"Gelu", "Tanh", "Exp", "Sin", "Copy", "Cos"}

// xnnLinears are the XNNPACK nodes that multiply by a matrix.
var xnnLinears = map[string]bool{"FullyConnected": true, "BatchMatrixMultiply": true}

// LinearOp reports whether an operator multiplies by a matrix: a linear layer or a matrix
// product, in any namespace and any quantized form. name is an ExecuTorch operator
// ("aten::addmm", "torchao::_linear_8bit_act_4bit_weight") or a Vulkan one
// ("aten.linear.default", "et_vk.linear_qcs4w.default"); it is a linear when a word of
// its base name (split at "_") is linear, mm, addmm, bmm, baddbmm or matmul
// (aten::_weight_int8pack_mm's last word is mm). upsample_bilinear2d is not: its word is
// "bilinear2d".
func LinearOp(name string) bool {
	base := name
	if i := strings.LastIndex(base, "::"); i >= 0 {
		base = base[i+2:]
	} else if parts := strings.Split(base, "."); len(parts) >= 2 {
		base = parts[1]
	}
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	for _, w := range strings.Split(base, "_") {
		switch w {
		case "linear", "mm", "addmm", "bmm", "baddbmm", "matmul":
			return true
		}
	}
	return false
}

// readGraphs decodes the graph of each XH00 / VH00 delegate blob, once per distinct blob.
// A graph that cannot be read leaves Graph nil and says why in GraphError: the program
// itself is still good, only what runs inside that delegate is unknown.
func (p *Program) readGraphs(r io.ReaderAt, prog []byte) {
	type seenGraph struct {
		g   *DelegateGraph
		err string
	}
	seen := map[[2]int64]seenGraph{}
	for mi := range p.Methods {
		for di := range p.Methods[mi].Delegates {
			d := &p.Methods[mi].Delegates[di]
			if d.Signature != SigXNNPACK && d.Signature != SigVulkan {
				continue
			}
			key := [2]int64{d.BlobOffset, d.BlobSize}
			s, ok := seen[key]
			if !ok {
				g, err := readGraph(r, prog, d)
				s = seenGraph{g: g}
				if err != nil {
					s = seenGraph{err: err.Error()}
				}
				seen[key] = s
			}
			d.Graph, d.GraphError = s.g, s.err
		}
	}
}

func readGraph(r io.ReaderAt, prog []byte, d *Delegate) (*DelegateGraph, error) {
	blob := func(off, n int64) ([]byte, error) {
		if off < 0 || n < 0 || off > d.BlobSize || n > d.BlobSize-off {
			return nil, fmt.Errorf("bytes %d..%d lie outside the %d-byte payload", off, off+n, d.BlobSize)
		}
		if d.Location == Inline {
			return prog[d.BlobOffset+off : d.BlobOffset+off+n], nil
		}
		b := make([]byte, n)
		if _, err := r.ReadAt(b, d.BlobOffset+off); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return b, nil
	}
	h, err := blob(0, delegateHeaderSize)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if n := binary.LittleEndian.Uint16(h[8:]); n < delegateHeaderSize {
		return nil, fmt.Errorf("header says it is %d bytes, want at least %d", n, delegateHeaderSize)
	}
	fbOff, fbSize := int64(binary.LittleEndian.Uint32(h[10:])), int64(binary.LittleEndian.Uint32(h[14:]))
	if fbSize > MaxGraphSize {
		return nil, fmt.Errorf("graph of %d bytes is over the %d-byte limit, not read", fbSize, MaxGraphSize)
	}
	buf, err := blob(fbOff, fbSize)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	if d.Signature == SigXNNPACK {
		g, err := decodeXNNGraph(newFbuf(buf))
		if err != nil {
			return nil, fmt.Errorf("XNNGraph: %w", err)
		}
		return g, nil
	}
	g, err := decodeVkGraph(newFbuf(buf))
	if err != nil {
		return nil, fmt.Errorf("VkGraph: %w", err)
	}
	return g, nil
}

func graphRoot(f *fbuf) (table, error) {
	root, err := f.deref(0)
	if err != nil {
		return table{}, fmt.Errorf("root offset: %w", err)
	}
	return f.table(root)
}

// XNNGraph slots (schema.fbs): version, xnodes, xvalues, num_externs, input_ids,
// output_ids, constant_buffer, mem_buffer_sizes, constant_data.
const xgNodes, xgInputs, xgOutputs, xgConstBuf, xgConstData = 1, 4, 5, 6, 8

func decodeXNNGraph(f *fbuf) (*DelegateGraph, error) {
	t, err := graphRoot(f)
	if err != nil {
		return nil, err
	}
	g := &DelegateGraph{Format: "XNNGraph", Ops: map[string]int{}, Named: map[string]int64{}}
	if g.Nodes, err = t.tables(xgNodes, "xnodes", func(_ int, e table) error {
		tag, err := e.u8(0)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("node type %d", tag)
		if tag >= 1 && int(tag) <= len(xnnNodeNames) {
			name = xnnNodeNames[tag-1]
		}
		g.Ops[name]++
		if xnnLinears[name] {
			g.Linears++
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := g.externs(t, xgInputs, xgOutputs); err != nil {
		return nil, err
	}
	if _, err := t.tables(xgConstBuf, "constant_buffer", func(_ int, e table) error {
		_, n, err := e.bytesLen(0)
		g.ConstantBytes += int64(n)
		return err
	}); err != nil {
		return nil, err
	}
	_, err = t.tables(xgConstData, "constant_data", g.constant)
	return g, err
}

// VkGraph slots (schema.fbs): version, chain, values, input_ids, output_ids, constants.
const vgChain, vgInputs, vgOutputs, vgConstants = 1, 3, 4, 5

func decodeVkGraph(f *fbuf) (*DelegateGraph, error) {
	t, err := graphRoot(f)
	if err != nil {
		return nil, err
	}
	g := &DelegateGraph{Format: "VkGraph", Ops: map[string]int{}, Named: map[string]int64{}}
	if g.Nodes, err = t.tables(vgChain, "chain", func(_ int, e table) error {
		name, err := e.str(1)
		g.Ops[name]++
		if LinearOp(name) {
			g.Linears++
		}
		return err
	}); err != nil {
		return nil, err
	}
	if err := g.externs(t, vgInputs, vgOutputs); err != nil {
		return nil, err
	}
	_, err = t.tables(vgConstants, "constants", g.constant)
	return g, err
}

func (g *DelegateGraph) externs(t table, in, out int) error {
	_, n, err := t.vector(in, 4)
	if err != nil {
		return fmt.Errorf("input_ids: %w", err)
	}
	g.Inputs = n
	_, n, err = t.vector(out, 4)
	if err != nil {
		return fmt.Errorf("output_ids: %w", err)
	}
	g.Outputs = n
	return nil
}

// constant reads one ConstantDataOffset (XNNPACK) or VkBytes (Vulkan): both are
// {offset: u64, size: u64, named_key: string}.
func (g *DelegateGraph) constant(_ int, e table) error {
	size, err := e.i64(1)
	if err != nil {
		return err
	}
	key, err := e.str(2)
	if err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("constant of %d bytes", size)
	}
	if key != "" {
		g.Named[key] = max(g.Named[key], size)
	} else {
		g.ConstantBytes += size
	}
	return nil
}
