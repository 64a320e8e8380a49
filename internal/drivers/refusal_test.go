package drivers

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fakeTensor struct {
	name, dtype string
	bytes       int
}

// writeSafetensors writes a real safetensors file of zeros; truncate drops data bytes from
// the end. Enough for convert.py's preflight, which runs before torch is imported.
func writeSafetensors(t *testing.T, path string, tensors []fakeTensor, truncate int) {
	t.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	off := 0
	for _, ft := range tensors {
		width := map[string]int{"F32": 4, "BF16": 2, "F16": 2, "I64": 8, "BOOL": 1}[ft.dtype]
		header[ft.name] = map[string]any{"dtype": ft.dtype, "shape": []int{ft.bytes / width}, "data_offsets": []int{off, off + ft.bytes}}
		off += ft.bytes
	}
	raw, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(raw)))
	buf = append(append(buf, raw...), make([]byte, off-truncate)...)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// convert.py must refuse a checkpoint that does not match its plan, naming the tensor,
// before it imports torch: these cases run with any python3.
func TestConvertRefusals(t *testing.T) {
	py := anyPython(t)
	names := append(hfNames("qwen3", 1, true, nil), "model.layers.0.attn.bias")
	const extra = "model.layers.0.self_attn.q_proj.lora_A.weight"
	cases := []struct {
		name     string
		tensors  []string
		dtype    func(name string) string
		truncate int
		spoil    func(c *Convert)
		// arch replaces the one-layer Qwen3 the other cases plan.
		arch    *Arch
		subject string
		message string
	}{
		{name: "unknown tensor", tensors: append(append([]string{}, names...), extra), subject: extra, message: "not in the conversion plan"},
		{name: "planned tensor missing", spoil: func(c *Convert) { c.Tensors["model.layers.0.mlp.extra.weight"] = Rule{To: "x"} },
			subject: "model.layers.0.mlp.extra.weight", message: "is in no shard"},
		{name: "count", spoil: func(c *Convert) { c.ExpectTensors++ }, message: "the plan makes 14 tensors, it expects 15"},
		// An ignored buffer is not read, whatever its dtype: the run gets as far as the count.
		{name: "ignored bool buffer", dtype: func(n string) string {
			if n == "model.layers.0.attn.bias" {
				return "BOOL"
			}
			return "F32"
		}, spoil: func(c *Convert) { c.ExpectTensors++ }, message: "the plan makes 14 tensors"},
		{name: "dtype", dtype: func(n string) string {
			if n == "model.norm.weight" {
				return "I64"
			}
			return "F32"
		}, subject: "model.norm.weight", message: "has dtype I64"},
		{name: "truncated", tensors: hfNames("qwen3", 1, true, nil), truncate: 4, subject: "lm_head.weight", message: "lies outside the file"},
		// Phi's qkv_proj is cut by sizes: rows that do not add up to the tensor's are a
		// wrong head count or head_dim, refused before any tensor is cut.
		{name: "fused rows", arch: &Arch{Family: "phi4mini", Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 2, TiedEmbeddings: true,
			Tensors: hfNames("phi4mini", 1, false, nil)},
			subject: "model.layers.0.self_attn.qkv_proj.weight", message: "shape [4] does not split into parts of [4, 2, 2] rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := Arch{Family: "qwen3", Layers: 1, Heads: 2, KVHeads: 1, Tensors: names}
			if tc.arch != nil {
				arch = *tc.arch
			}
			files := tc.tensors
			if files == nil {
				files = arch.Tensors
			}
			var fts []fakeTensor
			for _, n := range files {
				dt := "F32"
				if tc.dtype != nil {
					dt = tc.dtype(n)
				}
				fts = append(fts, fakeTensor{n, dt, 16})
			}
			shard := filepath.Join(dir, "model.safetensors")
			writeSafetensors(t, shard, fts, tc.truncate)
			plan, err := PlanConvert(arch, []string{shard},
				filepath.Join(dir, "out", "consolidated.pth"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.spoil != nil {
				tc.spoil(&plan)
			}
			_, err = Runner{Python: py}.Convert(context.Background(), plan)
			var de *Error
			if !errors.As(err, &de) || de.Status != 1 || de.Subject != tc.subject || !strings.Contains(de.Message, tc.message) {
				t.Fatalf("error %#v, want status 1, subject %q, message with %q", err, tc.subject, tc.message)
			}
			if _, statErr := os.Stat(plan.Output); statErr == nil {
				t.Errorf("checkpoint written despite the error")
			}
		})
	}
}
