package pte_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/google/go-cmp/cmp"
)

// TestMetadataTypes builds one getter per value shape and checks the Go type it reads back as.
func TestMetadataTypes(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"int", 7, int64(7)},
		{"negative", int64(-3), int64(-3)},
		{"bool", false, false},
		{"double", 0.25, 0.25},
		{"string", "llama3", "llama3"},
		{"ints", []int64{1, 2, 3}, []int64{1, 2, 3}},
		{"get_eos_ids", []int64{9}, []int64{9}},
		{"one_element_list", []int64{4}, []int64{4}},
		{"one_double_list", []float64{0.5}, []float64{0.5}},
		{"doubles", []float64{0.5, 1.5}, []float64{0.5, 1.5}},
		{"bools", []bool{true, false}, []bool{true, false}},
	}
	var md []ptetest.Meta
	for _, tc := range tests {
		md = append(md, ptetest.Meta{Name: tc.name, Value: tc.in})
	}
	got := open(t, ptetest.Spec{Metadata: md}).Metadata()
	for _, tc := range tests {
		if !cmp.Equal(got[tc.name], tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, got[tc.name], tc.want)
		}
	}
	if len(got) != len(tests) {
		t.Errorf("%d values, want %d", len(got), len(tests))
	}
}

func TestMetadataAccessors(t *testing.T) {
	md := pte.Metadata{"i": int64(5), "t": true, "f": false, "l": []int64{1, 2}, "s": "x", "d": 1.5}
	tests := []struct {
		name          string
		intV          int64
		intOK         bool
		ints          []int64
		intsOK        bool
		boolV, boolOK bool
	}{
		{"i", 5, true, []int64{5}, true, true, true},
		{"t", 1, true, nil, false, true, true},
		{"f", 0, true, nil, false, false, true},
		{"l", 0, false, []int64{1, 2}, true, false, false},
		{"s", 0, false, nil, false, false, false},
		{"d", 0, false, nil, false, false, false},
		{"absent", 0, false, nil, false, false, false},
	}
	for _, tc := range tests {
		if v, ok := md.Int(tc.name); v != tc.intV || ok != tc.intOK {
			t.Errorf("Int(%s) = %d, %v", tc.name, v, ok)
		}
		if v, ok := md.Ints(tc.name); !cmp.Equal(v, tc.ints) || ok != tc.intsOK {
			t.Errorf("Ints(%s) = %v, %v", tc.name, v, ok)
		}
		if v, ok := md.Bool(tc.name); v != tc.boolV || ok != tc.boolOK {
			t.Errorf("Bool(%s) = %v, %v", tc.name, v, ok)
		}
	}
	if got := md.Names(); !cmp.Equal(got, []string{"d", "f", "i", "l", "s", "t"}) {
		t.Errorf("Names() = %v", got)
	}
	for v, want := range map[any]string{"a b": `"a b"`, int64(3): "3", nil: "none", 0.5: "0.5"} {
		if got := pte.Format(v); got != want {
			t.Errorf("Format(%#v) = %s, want %s", v, got, want)
		}
	}
}
