package pte

// Backend ids as written in BackendDelegate.id (the runtime's registration names).
const (
	XnnpackBackend    = "XnnpackBackend"
	VulkanBackend     = "VulkanBackend"
	QnnBackend        = "QnnBackend"
	NeuropilotBackend = "NeuropilotBackend"
	EnnBackend        = "EnnBackend"
)

// Method is one execution plan. Real methods (forward, kv_forward, ...) carry instructions;
// metadata getters carry only values and outputs.
type Method struct {
	Name string
	// InputSpec and OutputSpec are the pytree specs of the method's inputs and outputs
	// (ContainerMetadata), JSON in new files and the T2#... form in old ones.
	InputSpec, OutputSpec string
	Values                []Value
	Inputs, Outputs       []int32
	Chains                []Chain
	Operators             []Operator
	Delegates             []Delegate
	NonConstBufferSizes   []int64
}

// Chain is a sequence of instructions with its own inputs and outputs.
type Chain struct {
	Inputs, Outputs []int32
	Instructions    []Instruction
}

// InstrKind is the InstructionArguments union tag.
type InstrKind uint8

// Instruction kinds in schema order.
const (
	InstrNone InstrKind = iota
	InstrKernelCall
	InstrDelegateCall
	InstrMoveCall
	InstrJumpFalseCall
	InstrFreeCall
)

var instrNames = [...]string{"none", "kernel", "delegate", "move", "jump_false", "free"}

func (k InstrKind) String() string {
	if int(k) < len(instrNames) {
		return instrNames[k]
	}
	return "unknown"
}

// Instruction is one step of a chain. Index is the operator index (KernelCall), the
// delegate index (DelegateCall), move_from (MoveCall), cond_value_index (JumpFalseCall)
// or value_index (FreeCall); Target is move_to or destination_instruction.
type Instruction struct {
	Kind   InstrKind
	Index  int32
	Target int32
	Args   []int32
}

// Operator is a kernel called by name, e.g. aten::add with overload "out".
type Operator struct {
	Name, Overload string
}

// DataLocation says where a delegate's processed blob lives.
type DataLocation int8

// Blob locations in schema order.
const (
	Inline  DataLocation = 0
	Segment DataLocation = 1
)

func (l DataLocation) String() string {
	switch l {
	case Inline:
		return "inline"
	case Segment:
		return "segment"
	}
	return "unknown"
}

// Delegate is one lowered subgraph: the backend that runs it and where its blob is.
type Delegate struct {
	ID string
	// Location and Index point into Program.InlineData or Program.Segments.
	Location     DataLocation
	Index        uint32
	CompileSpecs []CompileSpec
	// BlobOffset is the blob's absolute file offset, BlobSize its length in bytes.
	BlobOffset, BlobSize int64
	// Signature names the blob's magic (XH00, VH00, QNN, NEURON) so a reader can tell a
	// real backend payload from a stand-in without loading it; see Signature.
	Signature string
	// Head is the blob's first bytes (up to 16), for checks of its header.
	Head []byte
	// Graph is what runs inside the delegate, read from an XNNPACK or Vulkan payload; nil
	// for the vendor formats (QNN, NeuroPilot) and when the graph could not be read, which
	// GraphError then says.
	Graph      *DelegateGraph
	GraphError string
}

// CompileSpec is one backend option recorded at lowering time.
type CompileSpec struct {
	Key   string
	Value []byte
}

// DataSegment is one region after the program; Offset is relative to the segment base.
type DataSegment struct {
	Offset, Size uint64
	// FileOffset is the absolute position of the segment in the file.
	FileOffset int64
}

// SubsegmentOffsets splits a segment into tensors (constant and mutable data).
type SubsegmentOffsets struct {
	SegmentIndex uint32
	Offsets      []uint64
}

// NamedData maps a key (XNNPACK: SHA-256 hex of the bytes; MediaTek: the shared blob key)
// to a segment.
type NamedData struct {
	Key          string
	SegmentIndex uint32
}

// InlineData is a blob stored inside the program flatbuffer (legacy constant buffers and
// inline delegate data): where it is and how big, never its bytes.
type InlineData struct {
	FileOffset, Size int64
}
