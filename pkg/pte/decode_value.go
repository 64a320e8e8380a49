package pte

import "fmt"

// Decoded sizes charged to the budget, roughly the Go structs' sizes.
const valueCost, tensorCost, instructionCost = 128, 112, 64

func decodeValue(t table) (Value, error) {
	if err := t.f.charge(valueCost); err != nil {
		return Value{}, err
	}
	tag, err := t.u8(0)
	if err != nil {
		return Value{}, err
	}
	v := Value{Kind: Kind(tag)}
	if v.Kind == KindNone || v.Kind == KindNull {
		return v, nil
	}
	if v.Kind > KindOptionalTensorList {
		return v, fmt.Errorf("unknown value type %d", tag)
	}
	val, ok, err := t.sub(1)
	if err != nil {
		return v, fmt.Errorf("%s value: %w", v.Kind, err)
	}
	if !ok {
		return v, fmt.Errorf("%s value has no payload", v.Kind)
	}
	switch v.Kind {
	case KindInt:
		v.Int, err = val.i64(0)
	case KindBool:
		v.Bool, err = val.boolean(0)
	case KindDouble:
		v.Double, err = val.f64(0)
	case KindString:
		v.String, err = val.str(0)
	case KindIntList:
		v.Ints, err = val.i64s(0)
	case KindDoubleList:
		v.Doubles, err = val.f64s(0)
	case KindBoolList:
		v.Bools, err = val.bools(0)
	case KindTensorList, KindOptionalTensorList:
		var idx []int32
		idx, err = val.i32s(0)
		v.Ints = widen(idx)
	case KindTensor:
		v.Tensor, err = decodeTensor(val)
	}
	if err != nil {
		return v, fmt.Errorf("%s value: %w", v.Kind, err)
	}
	return v, nil
}

func widen(v []int32) []int64 {
	if v == nil {
		return nil
	}
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// Tensor field slots.
const (
	tenScalarType, tenStorageOffset, tenSizes, tenDimOrder, tenRequiresGrad, tenDataBuffer, tenAlloc, tenLayout, tenDynamism, tenExtra = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
)

func decodeTensor(t table) (*Tensor, error) {
	if err := t.f.charge(tensorCost); err != nil {
		return nil, err
	}
	ten := &Tensor{}
	st, err := t.u8(tenScalarType)
	if err != nil {
		return nil, err
	}
	ten.ScalarType = ScalarType(int8(st))
	if ten.StorageOffset, err = t.i32(tenStorageOffset); err != nil {
		return nil, err
	}
	if ten.Sizes, err = t.i32s(tenSizes); err != nil {
		return nil, fmt.Errorf("sizes: %w", err)
	}
	if ten.DimOrder, err = t.bytes(tenDimOrder); err != nil {
		return nil, fmt.Errorf("dim_order: %w", err)
	}
	if ten.RequiresGrad, err = t.boolean(tenRequiresGrad); err != nil {
		return nil, err
	}
	if ten.DataBufferIdx, err = t.u32(tenDataBuffer); err != nil {
		return nil, err
	}
	if err := decodeAllocation(t, ten); err != nil {
		return nil, err
	}
	layout, err := t.u8(tenLayout)
	if err != nil {
		return nil, err
	}
	ten.Layout = int8(layout)
	dyn, err := t.u8(tenDynamism)
	if err != nil {
		return nil, err
	}
	ten.Dynamism = int8(dyn)
	return ten, decodeExtra(t, ten)
}

func decodeAllocation(t table, ten *Tensor) error {
	a, ok, err := t.sub(tenAlloc)
	if err != nil || !ok {
		return err
	}
	ten.Allocated = true
	if ten.MemoryID, err = a.u32(0); err != nil {
		return err
	}
	low, err := a.u32(1)
	if err != nil {
		return err
	}
	high, err := a.u32(2)
	ten.MemoryOffset = uint64(high)<<32 | uint64(low)
	return err
}

func decodeExtra(t table, ten *Tensor) error {
	x, ok, err := t.sub(tenExtra)
	if err != nil || !ok {
		return err
	}
	if ten.FullyQualifiedName, err = x.str(1); err != nil {
		return fmt.Errorf("extra_tensor_info: %w", err)
	}
	loc, err := x.u8(2)
	ten.External = loc == 1
	return err
}
