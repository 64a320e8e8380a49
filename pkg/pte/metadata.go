package pte

import (
	"fmt"
	"sort"
	"strings"
)

// Metadata holds the values of a program's constant methods (get_max_seq_len, use_kv_cache,
// get_eos_ids, ...), evaluated without running anything: a getter's result is simply its
// output values. Values are int64, bool, float64, string, []int64, []float64, []bool, or
// []any for mixed lists; a getter that returns a tensor or nothing is left out.
type Metadata map[string]any

// listMethods are always lists, even with one element, as the runner reads them.
var listMethods = map[string]bool{"get_eos_ids": true}

// Metadata evaluates every constant method (no inputs, no instructions).
func (p *Program) Metadata() Metadata {
	md := Metadata{}
	for i := range p.Methods {
		m := &p.Methods[i]
		if !m.IsConstant() || len(m.Outputs) == 0 {
			continue
		}
		if v, ok := m.constantValue(); ok {
			md[m.Name] = v
		}
	}
	return md
}

func (m *Method) constantValue() (any, bool) {
	leaves := make([]any, 0, len(m.Outputs))
	for _, o := range m.Outputs {
		v, ok := scalar(m.Values[o])
		if !ok {
			return nil, false
		}
		leaves = append(leaves, v)
	}
	if len(leaves) == 1 && !listMethods[m.Name] && !isListSpec(m.OutputSpec) {
		return leaves[0], true
	}
	return list(leaves), true
}

// isListSpec reports whether a getter's output pytree spec is a list or tuple, so a
// one-element list stays a list: JSON specs name builtins.list/tuple, the older string
// form starts with L<n># or T<n>#.
func isListSpec(spec string) bool {
	for _, p := range []string{`[1, {"type": "builtins.list"`, `[1, {"type": "builtins.tuple"`} {
		if strings.HasPrefix(spec, p) {
			return true
		}
	}
	return len(spec) > 2 && (spec[0] == 'L' || spec[0] == 'T') && spec[1] >= '0' && spec[1] <= '9'
}

func scalar(v Value) (any, bool) {
	switch v.Kind {
	case KindInt:
		return v.Int, true
	case KindBool:
		return v.Bool, true
	case KindDouble:
		return v.Double, true
	case KindString:
		return v.String, true
	case KindIntList:
		return v.Ints, true
	case KindDoubleList:
		return v.Doubles, true
	case KindBoolList:
		return v.Bools, true
	}
	return nil, false
}

// list turns leaves into a typed slice when they share a scalar type, flattening int
// lists so that get_eos_ids reads the same whether emitted as Ints or an IntList.
func list(leaves []any) any {
	ints := make([]int64, 0, len(leaves))
	for _, l := range leaves {
		switch x := l.(type) {
		case int64:
			ints = append(ints, x)
		case []int64:
			ints = append(ints, x...)
		default:
			return sameType(leaves)
		}
	}
	return ints
}

func sameType(leaves []any) any {
	fl, bl := make([]float64, 0, len(leaves)), make([]bool, 0, len(leaves))
	for _, l := range leaves {
		switch x := l.(type) {
		case float64:
			fl = append(fl, x)
		case bool:
			bl = append(bl, x)
		}
	}
	switch len(leaves) {
	case len(fl):
		return fl
	case len(bl):
		return bl
	}
	return leaves
}

// Names returns the metadata names, sorted.
func (md Metadata) Names() []string {
	names := make([]string, 0, len(md))
	for n := range md {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Int returns an integer value; bools count as 0/1 because export_llm writes some flags
// (get_state_reset_at_zero) as ints and others as bools.
func (md Metadata) Int(name string) (int64, bool) {
	switch x := md[name].(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Ints returns an integer list; a single integer reads as a one-element list.
func (md Metadata) Ints(name string) ([]int64, bool) {
	switch x := md[name].(type) {
	case []int64:
		return x, true
	case int64:
		return []int64{x}, true
	}
	return nil, false
}

// Bool returns a flag; integers read as true when non-zero.
func (md Metadata) Bool(name string) (bool, bool) {
	switch x := md[name].(type) {
	case bool:
		return x, true
	case int64:
		return x != 0, true
	}
	return false, false
}

// Format renders a value the way inspect prints it.
func Format(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case nil:
		return "none"
	}
	return fmt.Sprint(v)
}
