package drivers

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// These tests run the real drivers with torch (Debian's python3-torch at /usr/bin/python3):
// a tiny random HF model per family is written as real safetensors, planned in Go,
// converted by convert.py, and run both ways in testdata/tiny_models.py.

type tinyFacts struct {
	Layers  int  `json:"layers"`
	Heads   int  `json:"heads"`
	KVHeads int  `json:"kv_heads"`
	Tied    bool `json:"tied"`
}

type checkReport struct {
	MaxAbsDiff        float64   `json:"max_abs_diff"`
	MaxAbs            float64   `json:"max_abs"`
	Allclose          bool      `json:"allclose"`
	PerLayer          []float64 `json:"per_layer"`
	CheckpointTensors int       `json:"checkpoint_tensors"`
}

// headerNames reads the tensor names of safetensors files from their headers.
func headerNames(t *testing.T, shards []string) []string {
	t.Helper()
	var names []string
	for _, s := range shards {
		f, err := os.Open(s)
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		if err := binary.Read(f, binary.LittleEndian, &n); err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, n)
		if _, err := f.Read(raw); err != nil {
			t.Fatal(err)
		}
		f.Close()
		var h map[string]json.RawMessage
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("header of %s: %v", s, err)
		}
		for k := range h {
			if k != "__metadata__" {
				names = append(names, k)
			}
		}
	}
	sort.Strings(names)
	return names
}

// tinyModel writes a tiny model of family and returns its folder and conversion plan.
func tinyModel(t *testing.T, py, family string, extra ...string) (string, Convert, tinyFacts) {
	t.Helper()
	dir := t.TempDir()
	pyJSON(t, py, nil, append([]string{filepath.Join("testdata", "tiny_models.py"), "make", family, dir}, extra...)...)
	var facts tinyFacts
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	shards, err := ShardFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := headerNames(t, shards)
	for _, e := range extra {
		if e != "--extra" { // the plan does not know the extra tensor: the driver must refuse it
			names = remove(names, e)
		}
	}
	plan, err := PlanConvert(Arch{Family: family, Layers: facts.Layers, Heads: facts.Heads, KVHeads: facts.KVHeads,
		TiedEmbeddings: facts.Tied, Tensors: names}, shards, filepath.Join(dir, "checkpoint", "consolidated.pth"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, plan, facts
}

func remove(names []string, drop string) []string {
	var out []string
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

func TestConvertNumerical(t *testing.T) {
	py := torchPython(t)
	cases := []struct {
		family string
		dtypes map[string]int
		shards int
	}{
		{"llama", map[string]int{"float16": 21}, 1},
		{"qwen2_5", map[string]int{"bfloat16": 27}, 1},
		{"qwen3", map[string]int{"bfloat16": 25}, 2},
		{"lfm2", map[string]int{"float32": 24}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.family, func(t *testing.T) {
			dir, plan, facts := tinyModel(t, py, tc.family)
			if len(plan.Shards) != tc.shards {
				t.Errorf("%d shards, want %d", len(plan.Shards), tc.shards)
			}
			res, err := Runner{Python: py}.Convert(context.Background(), plan)
			if err != nil {
				t.Fatal(err)
			}
			if res.Tensors != plan.ExpectTensors || res.TiedEmbeddings != facts.Tied {
				t.Errorf("result %+v, want %d tensors, tied %v", res, plan.ExpectTensors, facts.Tied)
			}
			if len(res.Dtypes) != len(tc.dtypes) || res.Dtypes[firstKey(tc.dtypes)] != tc.dtypes[firstKey(tc.dtypes)] {
				t.Errorf("dtypes %v, want %v", res.Dtypes, tc.dtypes)
			}
			var rep checkReport
			pyJSON(t, py, &rep, filepath.Join("testdata", "tiny_models.py"), "check", tc.family, dir, plan.Output)
			if !rep.Allclose || rep.CheckpointTensors != plan.ExpectTensors {
				t.Fatalf("HF and ExecuTorch layouts disagree: %+v", rep)
			}
			if rep.MaxAbs < 0.1 {
				t.Fatalf("logits too small to tell layouts apart: %+v", rep)
			}
			t.Logf("%s: max |logit| %.3g, max diff %.3g", tc.family, rep.MaxAbs, rep.MaxAbsDiff)
		})
	}
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}

// The numerical check must notice a conversion that forgets the un-permute, or the split.
func TestConvertNumericalCatchesWrongPlans(t *testing.T) {
	py := torchPython(t)
	cases := []struct {
		family string
		spoil  func(c *Convert)
	}{
		{"llama", func(c *Convert) {
			for k, r := range c.Tensors {
				r.Unpermute = 0
				c.Tensors[k] = r
			}
		}},
		{"lfm2", func(c *Convert) {
			r := c.Tensors["model.layers.0.conv.in_proj.weight"]
			r.Split[0], r.Split[1] = r.Split[1], r.Split[0] // B and C swapped
		}},
	}
	for _, tc := range cases {
		t.Run(tc.family, func(t *testing.T) {
			dir, plan, _ := tinyModel(t, py, tc.family)
			tc.spoil(&plan)
			if _, err := (Runner{Python: py}).Convert(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			var rep checkReport
			pyJSON(t, py, &rep, filepath.Join("testdata", "tiny_models.py"), "check", tc.family, dir, plan.Output)
			if rep.Allclose || rep.MaxAbsDiff < 1e-3 {
				t.Fatalf("a spoiled plan passed the check: %+v", rep)
			}
		})
	}
}

func TestConvertRefusals(t *testing.T) {
	py := torchPython(t)
	const extra = "model.layers.0.self_attn.q_proj.lora_A.weight"
	t.Run("unknown tensor", func(t *testing.T) {
		_, plan, _ := tinyModel(t, py, "qwen3", "--extra", extra)
		_, err := Runner{Python: py}.Convert(context.Background(), plan)
		var de *Error
		if !errors.As(err, &de) || de.Subject != extra || de.Status != 1 || !strings.Contains(de.Message, "not in the conversion plan") {
			t.Fatalf("error %v, want a driver error naming %s", err, extra)
		}
		if _, statErr := os.Stat(plan.Output); statErr == nil {
			t.Errorf("checkpoint written despite the error")
		}
	})
	t.Run("count", func(t *testing.T) {
		_, plan, _ := tinyModel(t, py, "llama")
		plan.ExpectTensors++
		_, err := Runner{Python: py}.Convert(context.Background(), plan)
		if err == nil || !strings.Contains(err.Error(), "the plan expects 22") {
			t.Fatalf("error %v, want a count mismatch", err)
		}
	})
	t.Run("planned tensor missing", func(t *testing.T) {
		_, plan, _ := tinyModel(t, py, "qwen2_5")
		plan.Tensors["model.layers.9.mlp.up_proj.weight"] = Rule{To: "x"}
		_, err := Runner{Python: py}.Convert(context.Background(), plan)
		var de *Error
		if !errors.As(err, &de) || de.Subject != "model.layers.9.mlp.up_proj.weight" {
			t.Fatalf("error %v, want one naming the missing tensor", err)
		}
	})
}
