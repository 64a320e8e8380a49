package pte

import "fmt"

// Field slots of the tables in schema/program.fbs (ExecuTorch 1.4).
const (
	progVersion, progPlans, progConstBuf, progDelegateData, progSegments, progConstSeg, progMutableSegs, progNamedData   = 0, 1, 2, 3, 4, 5, 6, 7
	planName, planContainer, planValues, planInputs, planOutputs, planChains, planOperators, planDelegates, planBufSizes = 0, 1, 2, 3, 4, 5, 6, 7, 8
)

func (p *Program) decode(f *fbuf) error {
	root, err := f.deref(0)
	if err != nil {
		return fmt.Errorf("root offset: %w", err)
	}
	t, err := f.table(root)
	if err != nil {
		return fmt.Errorf("program table: %w", err)
	}
	if p.Version, err = t.u32(progVersion); err != nil {
		return fmt.Errorf("program version: %w", err)
	}
	if _, err = t.tables(progPlans, "execution_plan", func(_ int, e table) error {
		m, err := decodeMethod(e)
		p.Methods = append(p.Methods, m)
		return err
	}); err != nil {
		return err
	}
	if p.ConstantBuffers, err = inlineBlobs(t, progConstBuf, "constant_buffer"); err != nil {
		return err
	}
	if p.InlineData, err = inlineBlobs(t, progDelegateData, "backend_delegate_data"); err != nil {
		return err
	}
	if _, err = t.tables(progSegments, "segments", func(_ int, e table) error {
		var s DataSegment
		var err error
		if s.Offset, err = e.u64(0); err != nil {
			return err
		}
		s.Size, err = e.u64(1)
		p.Segments = append(p.Segments, s)
		return err
	}); err != nil {
		return err
	}
	if err = p.decodeSubsegments(t); err != nil {
		return err
	}
	_, err = t.tables(progNamedData, "named_data", func(_ int, e table) error {
		var nd NamedData
		var err error
		if nd.Key, err = e.str(0); err != nil {
			return err
		}
		nd.SegmentIndex, err = e.u32(1)
		p.NamedData = append(p.NamedData, nd)
		return err
	})
	return err
}

func (p *Program) decodeSubsegments(t table) error {
	cs, ok, err := t.sub(progConstSeg)
	if err != nil {
		return fmt.Errorf("constant_segment: %w", err)
	}
	if ok {
		s, err := decodeSubsegment(cs)
		if err != nil {
			return fmt.Errorf("constant_segment: %w", err)
		}
		p.ConstantSegment = &s
	}
	_, err = t.tables(progMutableSegs, "mutable_data_segments", func(_ int, e table) error {
		s, err := decodeSubsegment(e)
		p.MutableDataSegments = append(p.MutableDataSegments, s)
		return err
	})
	return err
}

func decodeSubsegment(t table) (SubsegmentOffsets, error) {
	var s SubsegmentOffsets
	var err error
	if s.SegmentIndex, err = t.u32(0); err != nil {
		return s, err
	}
	s.Offsets, err = t.u64s(1)
	return s, err
}

// inlineBlobs records where each Buffer / BackendDelegateInlineData's bytes are.
func inlineBlobs(t table, slot int, what string) ([]InlineData, error) {
	var out []InlineData
	_, err := t.tables(slot, what, func(_ int, e table) error {
		start, n, err := e.bytesLen(0)
		out = append(out, InlineData{FileOffset: int64(start), Size: int64(n)})
		return err
	})
	return out, err
}

func decodeMethod(t table) (Method, error) {
	var m Method
	var err error
	if m.Name, err = t.str(planName); err != nil {
		return m, fmt.Errorf("name: %w", err)
	}
	wrap := func(field string, err error) error {
		return fmt.Errorf("method %q %s: %w", m.Name, field, err)
	}
	if cm, ok, err := t.sub(planContainer); err != nil {
		return m, wrap("container_meta_type", err)
	} else if ok {
		if m.InputSpec, err = cm.str(0); err != nil {
			return m, wrap("container_meta_type", err)
		}
		if m.OutputSpec, err = cm.str(1); err != nil {
			return m, wrap("container_meta_type", err)
		}
	}
	if _, err = t.tables(planValues, "values", func(_ int, e table) error {
		v, err := decodeValue(e)
		m.Values = append(m.Values, v)
		return err
	}); err != nil {
		return m, wrap("", err)
	}
	if m.Inputs, err = t.i32s(planInputs); err != nil {
		return m, wrap("inputs", err)
	}
	if m.Outputs, err = t.i32s(planOutputs); err != nil {
		return m, wrap("outputs", err)
	}
	if err = m.decodeCode(t); err != nil {
		return m, wrap("", err)
	}
	if m.NonConstBufferSizes, err = t.i64s(planBufSizes); err != nil {
		return m, wrap("non_const_buffer_sizes", err)
	}
	return m, nil
}

// decodeCode reads chains, operators and delegates.
func (m *Method) decodeCode(t table) error {
	if _, err := t.tables(planChains, "chains", func(_ int, e table) error {
		c, err := decodeChain(e)
		m.Chains = append(m.Chains, c)
		return err
	}); err != nil {
		return err
	}
	if _, err := t.tables(planOperators, "operators", func(_ int, e table) error {
		var op Operator
		var err error
		if op.Name, err = e.str(0); err != nil {
			return err
		}
		op.Overload, err = e.str(1)
		m.Operators = append(m.Operators, op)
		return err
	}); err != nil {
		return err
	}
	_, err := t.tables(planDelegates, "delegates", func(_ int, e table) error {
		d, err := decodeDelegate(e)
		m.Delegates = append(m.Delegates, d)
		return err
	})
	return err
}

func decodeChain(t table) (Chain, error) {
	var c Chain
	var err error
	if c.Inputs, err = t.i32s(0); err != nil {
		return c, fmt.Errorf("inputs: %w", err)
	}
	if c.Outputs, err = t.i32s(1); err != nil {
		return c, fmt.Errorf("outputs: %w", err)
	}
	_, err = t.tables(2, "instructions", func(_ int, e table) error {
		in, err := decodeInstruction(e)
		c.Instructions = append(c.Instructions, in)
		return err
	})
	return c, err
}

func decodeInstruction(t table) (Instruction, error) {
	if err := t.f.charge(instructionCost); err != nil {
		return Instruction{}, err
	}
	tag, err := t.u8(0)
	if err != nil {
		return Instruction{}, err
	}
	in := Instruction{Kind: InstrKind(tag)}
	if in.Kind == InstrNone {
		return in, nil
	}
	if in.Kind > InstrFreeCall {
		return in, fmt.Errorf("unknown instruction type %d", tag)
	}
	args, ok, err := t.sub(1)
	if err != nil {
		return in, fmt.Errorf("%s call arguments: %w", in.Kind, err)
	}
	if !ok {
		return in, fmt.Errorf("%s call without arguments", in.Kind)
	}
	if in.Index, err = args.i32(0); err != nil {
		return in, err
	}
	switch in.Kind {
	case InstrKernelCall, InstrDelegateCall:
		in.Args, err = args.i32s(1)
	case InstrMoveCall, InstrJumpFalseCall:
		in.Target, err = args.i32(1)
	}
	return in, err
}

func decodeDelegate(t table) (Delegate, error) {
	var d Delegate
	var err error
	if d.ID, err = t.str(0); err != nil {
		return d, fmt.Errorf("id: %w", err)
	}
	ref, ok, err := t.sub(1)
	if err != nil {
		return d, fmt.Errorf("delegate %s processed: %w", d.ID, err)
	}
	if !ok {
		return d, fmt.Errorf("delegate %s has no processed blob reference", d.ID)
	}
	loc, err := ref.u8(0)
	if err != nil {
		return d, err
	}
	d.Location = DataLocation(loc)
	if d.Index, err = ref.u32(1); err != nil {
		return d, err
	}
	_, err = t.tables(2, "compile_specs", func(_ int, e table) error {
		var cs CompileSpec
		var err error
		if cs.Key, err = e.str(0); err != nil {
			return err
		}
		cs.Value, err = e.bytes(1)
		d.CompileSpecs = append(d.CompileSpecs, cs)
		return err
	})
	if err != nil {
		return d, fmt.Errorf("delegate %s: %w", d.ID, err)
	}
	return d, nil
}
