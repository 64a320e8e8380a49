package sizing

import "math"

// MaxBytes is where every size saturates. The architecture bounds (internal/model) keep real
// sizes far below it (under 2^62 with any window the config allows), so a size at MaxBytes
// only ever comes from a pipeline.yaml with absurd settings (a MediaTek response cap); it then reads as "too
// big for any runner" instead of wrapping to a negative number that fits a phone.
const MaxBytes = math.MaxInt64

// mul multiplies non-negative sizes and counts, saturating at MaxBytes.
func mul(xs ...int64) int64 {
	p := int64(1)
	for _, x := range xs {
		if x == 0 {
			return 0
		}
		if p > MaxBytes/x {
			p = MaxBytes
			continue
		}
		p *= x
	}
	return p
}

// AddBytes sums non-negative sizes, saturating at MaxBytes, for callers that add up
// sizing's results (plan's resident bytes) and for the backends' own size models.
func AddBytes(xs ...int64) int64 { return add(xs...) }

// MulBytes multiplies non-negative sizes and counts, saturating at MaxBytes, for the
// backends' own size models.
func MulBytes(xs ...int64) int64 { return mul(xs...) }

// FloatBytes truncates a non-negative float size to bytes, saturating at MaxBytes, for the
// backends' own size models.
func FloatBytes(f float64) int64 { return fromFloat(f) }

// add sums non-negative sizes, saturating at MaxBytes.
func add(xs ...int64) int64 {
	s := int64(0)
	for _, x := range xs {
		if x > MaxBytes-s {
			return MaxBytes
		}
		s += x
	}
	return s
}

// fromFloat truncates a non-negative float size to bytes, saturating at MaxBytes (and for
// a NaN, which no finite input produces).
func fromFloat(f float64) int64 {
	if !(f < float64(MaxBytes)) {
		return MaxBytes
	}
	return int64(f)
}
