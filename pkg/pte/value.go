package pte

import "fmt"

// Kind is the EValue (KernelTypes) union tag.
type Kind uint8

// EValue kinds in schema order.
const (
	KindNone Kind = iota
	KindNull
	KindInt
	KindBool
	KindDouble
	KindTensor
	KindString
	KindIntList
	KindDoubleList
	KindBoolList
	KindTensorList
	KindOptionalTensorList
)

var kindNames = [...]string{"none", "null", "int", "bool", "double", "tensor", "string",
	"int_list", "double_list", "bool_list", "tensor_list", "optional_tensor_list"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Value is one EValue of a method. Only the field that matches Kind is set; tensor lists
// keep their value indices in Ints.
type Value struct {
	Kind    Kind
	Int     int64
	Bool    bool
	Double  float64
	String  string
	Ints    []int64
	Doubles []float64
	Bools   []bool
	Tensor  *Tensor
}

// Tensor is a tensor's description; its data stays in the file.
type Tensor struct {
	ScalarType    ScalarType
	StorageOffset int32
	Sizes         []int32
	DimOrder      []uint8
	RequiresGrad  bool
	// DataBufferIdx indexes constant_segment.offsets (or the legacy constant_buffer);
	// 0 means the tensor is not a constant.
	DataBufferIdx uint32
	// Allocated is true when the memory planner placed the tensor (AllocationDetails).
	Allocated    bool
	MemoryID     uint32
	MemoryOffset uint64
	Layout       int8
	Dynamism     int8
	// External is true when the data lives in a .ptd file under FullyQualifiedName.
	External           bool
	FullyQualifiedName string
}

// ScalarType is the tensor element type (c10::ScalarType numbering).
type ScalarType int8

var scalarNames = map[ScalarType]string{
	0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
	7: "float64", 11: "bool", 12: "qint8", 13: "quint8", 14: "qint32", 15: "bfloat16",
	16: "quint4x2", 17: "quint2x4", 22: "bits16", 23: "float8_e5m2", 24: "float8_e4m3fn",
	25: "float8_e5m2fnuz", 26: "float8_e4m3fnuz", 27: "uint16", 28: "uint32", 29: "uint64",
}

func (s ScalarType) String() string {
	if n, ok := scalarNames[s]; ok {
		return n
	}
	return fmt.Sprintf("scalar_type(%d)", int8(s))
}
