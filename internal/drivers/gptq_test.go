package drivers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestNewGPTQMatchesSection65(t *testing.T) {
	g := NewGPTQ("/w/codes.pt", []Linear{{Name: "layers.0.attention.wq", Weight: "w.pt", Activations: "x.pt"}})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	want := "[1 0.95 0.9 0.85 0.8 0.75 0.7 0.65 0.6]"
	if got := fmt.Sprint(g.Clips); got != want {
		t.Errorf("clips %s, want %s", got, want)
	}
	if g.GroupSize != 32 || g.BlockSize != 128 || g.Damp != 0.01 || g.HalfRange != 7.5 || g.QMin != -8 || g.QMax != 7 || !g.FakeQuantActivations {
		t.Errorf("plan %+v", g)
	}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"group_size":32`, `"block_size":128`, `"half_range":7.5`, `"fake_quant_activations":true`, `"activations":"x.pt"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
	if strings.Contains(string(b), `"hessian"`) {
		t.Errorf("JSON %s carries an empty hessian", b)
	}
}

func TestGPTQValidate(t *testing.T) {
	lin := Linear{Name: "a", Weight: "w.pt", Hessian: "h.pt"}
	cases := []struct {
		name  string
		spoil func(g *GPTQ)
		want  string
	}{
		{"no out", func(g *GPTQ) { g.Out = "" }, "no output path"},
		{"damp", func(g *GPTQ) { g.Damp = 0 }, "damp 0"},
		{"block not multiple", func(g *GPTQ) { g.BlockSize = 100 }, "block size 100"},
		{"clip above 1", func(g *GPTQ) { g.Clips = []float64{1.2} }, "clip 1.2"},
		{"no clips", func(g *GPTQ) { g.Clips = nil }, "no clips"},
		{"grid", func(g *GPTQ) { g.QMin = 0 }, "codes 0..7"},
		{"both inputs", func(g *GPTQ) { g.Linears[0].Activations = "x.pt" }, "exactly one"},
		{"no input", func(g *GPTQ) { g.Linears[0].Hessian = "" }, "exactly one"},
		{"no weight", func(g *GPTQ) { g.Linears[0].Weight = "" }, "weight file"},
		{"twice", func(g *GPTQ) { g.Linears = append(g.Linears, lin) }, "listed twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGPTQ("/w/codes.pt", []Linear{lin})
			tc.spoil(&g)
			if err := g.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
