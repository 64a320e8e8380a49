package ptetest

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

type uoff = flatbuffers.UOffsetT

// blobRef says where a delegate's blob went: inline index or segment index.
type blobRef struct {
	inline bool
	index  uint32
}

// segmentPlan is a segment's blob and its offset relative to the segment base.
type segmentPlan struct {
	blob   Blob
	offset int64
}

// programBuilder builds the Program table of a Spec.
type programBuilder struct {
	b        *flatbuffers.Builder
	spec     Spec
	segments []segmentPlan
	inline   []Blob
	refs     []blobRef // per spec method
	named    []uint32  // segment index per named data entry
}

const segmentAlignment = 128

func align(n, a int64) int64 { return (n + a - 1) / a * a }

// assignSegments assigns segments: constants first, then distinct delegate blobs, then named data,
// each aligned to 128 bytes relative to the segment base (serialize_pte_binary's order).
func (pb *programBuilder) assignSegments(withSegments bool) error {
	add := func(b Blob) uint32 {
		off := int64(0)
		if n := len(pb.segments); n > 0 {
			last := pb.segments[n-1]
			off = align(last.offset+last.blob.size(), segmentAlignment)
		}
		pb.segments = append(pb.segments, segmentPlan{blob: b, offset: off})
		return uint32(len(pb.segments) - 1)
	}
	if withSegments {
		add(pb.spec.Constants)
	} else if pb.spec.Constants.size() > 0 || len(pb.spec.NamedData) > 0 {
		return fmt.Errorf("constants and named data need segments, which need an extended header")
	}
	seen := map[string]uint32{}
	for _, m := range pb.spec.Methods {
		switch {
		case m.Backend == "":
			pb.refs = append(pb.refs, blobRef{})
		case m.Inline || !withSegments:
			pb.inline = append(pb.inline, m.Blob)
			pb.refs = append(pb.refs, blobRef{inline: true, index: uint32(len(pb.inline) - 1)})
		default:
			key := fmt.Sprintf("%x/%d", m.Blob.Head, m.Blob.size())
			idx, ok := seen[key]
			if !ok {
				idx = add(m.Blob)
				seen[key] = idx
			}
			pb.refs = append(pb.refs, blobRef{index: idx})
		}
	}
	for _, nd := range pb.spec.NamedData {
		pb.named = append(pb.named, add(nd.Blob))
	}
	return nil
}

// build returns the finished flatbuffer (file identifier ET12, no extended header yet).
func (pb *programBuilder) build() ([]byte, error) {
	b := pb.b
	var plans []uoff
	for i, m := range pb.spec.Methods {
		plans = append(plans, pb.method(m, pb.refs[i]))
	}
	for _, md := range pb.spec.Metadata {
		p, err := pb.constantMethod(md)
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", md.Name, err)
		}
		plans = append(plans, p)
	}
	plansVec := b.CreateVectorOfTables(plans)
	inlineVec := pb.inlineData()
	segVec := pb.segmentTables()
	constSeg := pb.subsegments()
	namedVec := pb.namedData()

	b.StartObject(8)
	b.PrependUOffsetTSlot(1, plansVec, 0)
	if inlineVec != 0 {
		b.PrependUOffsetTSlot(3, inlineVec, 0)
	}
	if segVec != 0 {
		b.PrependUOffsetTSlot(4, segVec, 0)
		b.PrependUOffsetTSlot(5, constSeg, 0)
	}
	if namedVec != 0 {
		b.PrependUOffsetTSlot(7, namedVec, 0)
	}
	b.FinishWithFileIdentifier(b.EndObject(), []byte("ET12"))
	return b.FinishedBytes(), nil
}

func (pb *programBuilder) inlineData() uoff {
	if len(pb.inline) == 0 {
		return 0
	}
	b := pb.b
	var tabs []uoff
	for _, blob := range pb.inline {
		data := make([]byte, blob.size())
		copy(data, blob.Head)
		b.StartVector(1, len(data), 16)
		for i := len(data) - 1; i >= 0; i-- {
			b.PrependByte(data[i])
		}
		v := b.EndVector(len(data))
		b.StartObject(1)
		b.PrependUOffsetTSlot(0, v, 0)
		tabs = append(tabs, b.EndObject())
	}
	return b.CreateVectorOfTables(tabs)
}

func (pb *programBuilder) segmentTables() uoff {
	if len(pb.segments) == 0 {
		return 0
	}
	b := pb.b
	var tabs []uoff
	for _, s := range pb.segments {
		b.StartObject(2)
		b.PrependUint64Slot(0, uint64(s.offset), 0)
		b.PrependUint64Slot(1, uint64(s.blob.size()), 0)
		tabs = append(tabs, b.EndObject())
	}
	return b.CreateVectorOfTables(tabs)
}

// subsegments writes constant_segment: segment 0 with the placeholder offset 0.
func (pb *programBuilder) subsegments() uoff {
	b := pb.b
	offs := u64Vec(b, []uint64{0})
	b.StartObject(2)
	b.PrependUint32Slot(0, 0, 1)
	b.PrependUOffsetTSlot(1, offs, 0)
	return b.EndObject()
}

func (pb *programBuilder) namedData() uoff {
	if len(pb.spec.NamedData) == 0 {
		return 0
	}
	b := pb.b
	var tabs []uoff
	for i, nd := range pb.spec.NamedData {
		key := b.CreateString(nd.Key)
		b.StartObject(2)
		b.PrependUOffsetTSlot(0, key, 0)
		b.PrependUint32Slot(1, pb.named[i], 0)
		tabs = append(tabs, b.EndObject())
	}
	return b.CreateVectorOfTables(tabs)
}

func i32Vec(b *flatbuffers.Builder, v []int32) uoff {
	b.StartVector(4, len(v), 4)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependInt32(v[i])
	}
	return b.EndVector(len(v))
}

func i64Vec(b *flatbuffers.Builder, v []int64) uoff {
	b.StartVector(8, len(v), 8)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependInt64(v[i])
	}
	return b.EndVector(len(v))
}

func u64Vec(b *flatbuffers.Builder, v []uint64) uoff {
	b.StartVector(8, len(v), 8)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependUint64(v[i])
	}
	return b.EndVector(len(v))
}
