package pte

import "fmt"

// validate checks every index the program uses against the table it points into, so that
// later code (metadata evaluation, checks, inspect) can index without guarding.
func (p *Program) validate() error {
	for i := range p.Methods {
		if err := p.validateMethod(&p.Methods[i]); err != nil {
			return err
		}
	}
	nseg := uint32(len(p.Segments))
	if cs := p.ConstantSegment; cs != nil && len(cs.Offsets) > 0 && cs.SegmentIndex >= nseg {
		return fmt.Errorf("constant_segment: segment %d of %d", cs.SegmentIndex, nseg)
	}
	for i, ms := range p.MutableDataSegments {
		if ms.SegmentIndex >= nseg {
			return fmt.Errorf("mutable_data_segments[%d]: segment %d of %d", i, ms.SegmentIndex, nseg)
		}
	}
	for i, nd := range p.NamedData {
		if nd.SegmentIndex >= nseg {
			return fmt.Errorf("named_data[%d] %q: segment %d of %d", i, nd.Key, nd.SegmentIndex, nseg)
		}
	}
	return nil
}

func (p *Program) validateMethod(m *Method) error {
	nv := len(m.Values)
	inRange := func(what string, idx []int32) error {
		for _, v := range idx {
			if v < 0 || int(v) >= nv {
				return fmt.Errorf("method %q %s: value %d of %d", m.Name, what, v, nv)
			}
		}
		return nil
	}
	if err := inRange("inputs", m.Inputs); err != nil {
		return err
	}
	if err := inRange("outputs", m.Outputs); err != nil {
		return err
	}
	for ci, c := range m.Chains {
		for ii, in := range c.Instructions {
			if err := m.validateInstruction(in); err != nil {
				return fmt.Errorf("method %q chain %d instruction %d: %w", m.Name, ci, ii, err)
			}
			if err := inRange("instruction args", in.Args); err != nil {
				return err
			}
		}
	}
	for di := range m.Delegates {
		if err := p.locate(&m.Delegates[di]); err != nil {
			return fmt.Errorf("method %q delegate %d (%s): %w", m.Name, di, m.Delegates[di].ID, err)
		}
	}
	return nil
}

func (m *Method) validateInstruction(in Instruction) error {
	switch in.Kind {
	case InstrKernelCall:
		if in.Index < 0 || int(in.Index) >= len(m.Operators) {
			return fmt.Errorf("operator %d of %d", in.Index, len(m.Operators))
		}
	case InstrDelegateCall:
		if in.Index < 0 || int(in.Index) >= len(m.Delegates) {
			return fmt.Errorf("delegate %d of %d", in.Index, len(m.Delegates))
		}
	}
	return nil
}

// locate resolves a delegate's blob to a file range.
func (p *Program) locate(d *Delegate) error {
	switch d.Location {
	case Inline:
		if int(d.Index) >= len(p.InlineData) {
			return fmt.Errorf("inline blob %d of %d", d.Index, len(p.InlineData))
		}
		b := p.InlineData[d.Index]
		d.BlobOffset, d.BlobSize = b.FileOffset, b.Size
	case Segment:
		if int(d.Index) >= len(p.Segments) {
			return fmt.Errorf("segment %d of %d", d.Index, len(p.Segments))
		}
		s := p.Segments[d.Index]
		d.BlobOffset, d.BlobSize = s.FileOffset, int64(s.Size)
	default:
		return fmt.Errorf("unknown blob location %d", d.Location)
	}
	return nil
}
