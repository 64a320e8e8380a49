package check

import (
	"fmt"
	"slices"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// RequireMetadata reports getters the runtime cannot do without (the LLM runner fails
// without get_max_seq_len).
func RequireMetadata(md pte.Metadata, names ...string) []string {
	var problems []string
	for _, n := range names {
		if _, ok := md[n]; !ok {
			problems = append(problems, fmt.Sprintf("metadata %s is missing (the runner requires it)", n))
		}
	}
	return problems
}

// metadata compares the requested values with the ones the program carries.
func metadata(md pte.Metadata, want Expect, singularEOS bool) []string {
	var problems []string
	intWant := func(name string, v int64) {
		if v == 0 {
			return
		}
		problems = append(problems, compare(md, name, v)...)
	}
	intWant("get_max_seq_len", want.MaxSeqLen)
	intWant("get_max_context_len", want.MaxContextLen)
	if want.BOS != nil {
		problems = append(problems, compare(md, "get_bos_id", *want.BOS)...)
	}
	if want.EOS != nil {
		problems = append(problems, compare(md, eosGetter(md, singularEOS), want.EOS)...)
	}
	for _, name := range sortedKeys(want.Metadata) {
		problems = append(problems, compare(md, name, want.Metadata[name])...)
	}
	return problems
}

// eosGetter names the getter that holds the EOS ids. export_llm writes the list
// get_eos_ids; Qualcomm's static llama writes one id as get_eos_id, so a program of a
// backend whose tool does that, without the list, is held to its singular getter (several
// requested ids then cannot match).
func eosGetter(md pte.Metadata, singularEOS bool) string {
	if singularEOS {
		_, list := md["get_eos_ids"]
		_, one := md["get_eos_id"]
		if one && !list {
			return "get_eos_id"
		}
	}
	return "get_eos_ids"
}

func compare(md pte.Metadata, name string, want any) []string {
	got, ok := md[name]
	if !ok {
		return []string{fmt.Sprintf("metadata %s is missing, the request was %s", name, pte.Format(want))}
	}
	if !same(got, want) {
		return []string{fmt.Sprintf("metadata %s is %s, the request was %s", name, pte.Format(got), pte.Format(want))}
	}
	return nil
}

// same compares a metadata value with a requested one, treating any Go integer type (and
// a bool against 0/1) as the same number, and a single int as a one-element list.
func same(got, want any) bool {
	gi, gok := ints(got)
	wi, wok := ints(want)
	if gok && wok {
		return slices.Equal(gi, wi)
	}
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		return ok && g == w
	case string:
		g, ok := got.(string)
		return ok && g == w
	case []float64:
		g, ok := got.([]float64)
		return ok && slices.Equal(g, w)
	case []bool:
		g, ok := got.([]bool)
		return ok && slices.Equal(g, w)
	}
	return false
}

// ints reads integers, bools (as 0/1) and integer lists as []int64.
func ints(v any) ([]int64, bool) {
	switch x := v.(type) {
	case int:
		return []int64{int64(x)}, true
	case int32:
		return []int64{int64(x)}, true
	case int64:
		return []int64{x}, true
	case bool:
		if x {
			return []int64{1}, true
		}
		return []int64{0}, true
	case []int64:
		return x, true
	case []int:
		out := make([]int64, len(x))
		for i, e := range x {
			out[i] = int64(e)
		}
		return out, true
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
