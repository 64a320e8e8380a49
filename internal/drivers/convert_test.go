package drivers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/golden"
)

// hfNames lists the tensor names a family's HF checkpoint carries for the given layers.
func hfNames(family string, layers int, lmHead bool, lfmTypes []string) []string {
	names := []string{"model.embed_tokens.weight"}
	attn := []string{"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"}
	for i := 0; i < layers; i++ {
		var suffixes []string
		switch family {
		case "lfm2":
			suffixes = []string{"operator_norm.weight", "ffn_norm.weight", "feed_forward.w1.weight", "feed_forward.w2.weight", "feed_forward.w3.weight"}
			if lfmTypes[i] == "conv" {
				suffixes = append(suffixes, "conv.conv.weight", "conv.in_proj.weight", "conv.out_proj.weight")
			} else {
				suffixes = append(suffixes, attn...)
				suffixes = append(suffixes, "self_attn.out_proj.weight", "self_attn.q_layernorm.weight", "self_attn.k_layernorm.weight")
			}
		case "phi4mini":
			suffixes = []string{"self_attn.qkv_proj.weight", "self_attn.o_proj.weight", "input_layernorm.weight",
				"post_attention_layernorm.weight", "mlp.gate_up_proj.weight", "mlp.down_proj.weight"}
		default:
			suffixes = append(append([]string{}, attn...), "self_attn.o_proj.weight", "input_layernorm.weight",
				"post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.down_proj.weight", "mlp.up_proj.weight")
			switch family {
			case "qwen2_5":
				suffixes = append(suffixes, "self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias")
			case "qwen3":
				suffixes = append(suffixes, "self_attn.q_norm.weight", "self_attn.k_norm.weight")
			}
		}
		for _, s := range suffixes {
			names = append(names, fmt.Sprintf("model.layers.%d.%s", i, s))
		}
	}
	if family == "lfm2" {
		names = append(names, "model.embedding_norm.weight")
	} else {
		names = append(names, "model.norm.weight")
	}
	if lmHead {
		names = append(names, "lm_head.weight")
	}
	return names
}

func planJSON(t *testing.T, c Convert) []byte {
	t.Helper()
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestPlanConvertGolden(t *testing.T) {
	withInvFreq := append(hfNames("llama", 2, false, nil), "model.layers.0.self_attn.rotary_emb.inv_freq")
	cases := []struct {
		name   string
		arch   Arch
		expect int
	}{
		{"llama", Arch{Family: "llama", Layers: 2, Heads: 4, KVHeads: 2, TiedEmbeddings: true, Tensors: withInvFreq}, 2*9 + 2 + 1}, // inv_freq dropped, output tied,
		{"qwen2_5", Arch{Family: "qwen2_5", Layers: 2, Heads: 4, KVHeads: 2, Tensors: hfNames("qwen2_5", 2, true, nil)}, 2*12 + 3},
		{"qwen3", Arch{Family: "qwen3", Layers: 2, Heads: 4, KVHeads: 2, Tensors: hfNames("qwen3", 2, true, nil)}, 2*11 + 3},
		// conv layer: 8 sources → 10 outputs; attention layer: 11.
		{"lfm2", Arch{Family: "lfm2", Layers: 2, Heads: 4, KVHeads: 2, TiedEmbeddings: true,
			Tensors: hfNames("lfm2", 2, false, []string{"conv", "full_attention"})}, 10 + 11 + 3},
		// 6 sources a layer → 9 outputs (qkv in three, gate_up in two); output tied.
		{"phi4mini", Arch{Family: "phi4mini", Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, TiedEmbeddings: true,
			Tensors: hfNames("phi4mini", 2, false, nil)}, 2*9 + 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := PlanConvert(tc.arch, []string{"/m/model.safetensors"}, "/w/checkpoint/consolidated.pth")
			if err != nil {
				t.Fatal(err)
			}
			if c.ExpectTensors != tc.expect {
				t.Errorf("ExpectTensors = %d, want %d", c.ExpectTensors, tc.expect)
			}
			if len(c.Tensors) != len(tc.arch.Tensors) {
				t.Errorf("plan has %d rules for %d tensors", len(c.Tensors), len(tc.arch.Tensors))
			}
			golden.Check(t, filepath.Join("testdata", "plans", tc.name+".json"), planJSON(t, c))
		})
	}
}

func TestPlanConvertRules(t *testing.T) {
	llama, err := PlanConvert(Arch{Family: "llama", Layers: 1, Heads: 8, KVHeads: 2, TiedEmbeddings: true,
		Tensors: hfNames("llama", 1, false, nil)}, []string{"s"}, "/w/c.pth")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		plan Convert
		name string
		want Rule
	}{
		{llama, "model.layers.0.self_attn.q_proj.weight", Rule{To: "layers.0.attention.wq.weight", Unpermute: 8}},
		{llama, "model.layers.0.self_attn.k_proj.weight", Rule{To: "layers.0.attention.wk.weight", Unpermute: 2}},
		{llama, "model.layers.0.self_attn.v_proj.weight", Rule{To: "layers.0.attention.wv.weight"}},
		{llama, "model.layers.0.mlp.gate_proj.weight", Rule{To: "layers.0.feed_forward.w1.weight"}},
		{llama, "model.layers.0.mlp.down_proj.weight", Rule{To: "layers.0.feed_forward.w2.weight"}},
		{llama, "model.layers.0.mlp.up_proj.weight", Rule{To: "layers.0.feed_forward.w3.weight"}},
	}
	qwen3, err := PlanConvert(Arch{Family: "qwen3", Layers: 1, Heads: 8, KVHeads: 2,
		Tensors: hfNames("qwen3", 1, true, nil)}, []string{"s"}, "/w/c.pth")
	if err != nil {
		t.Fatal(err)
	}
	checks = append(checks,
		struct {
			plan Convert
			name string
			want Rule
		}{qwen3, "model.layers.0.self_attn.q_proj.weight", Rule{To: "layers.0.attention.wq.weight"}},
		struct {
			plan Convert
			name string
			want Rule
		}{qwen3, "model.layers.0.self_attn.q_norm.weight", Rule{To: "layers.0.attention.q_norm_fn.weight"}},
		struct {
			plan Convert
			name string
			want Rule
		}{qwen3, "lm_head.weight", Rule{To: "output.weight"}},
	)
	for _, c := range checks {
		if got := c.plan.Tensors[c.name]; fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: rule %+v, want %+v", c.name, got, c.want)
		}
	}
	if llama.Tie == nil || llama.Tie.From != "tok_embeddings.weight" || llama.Tie.To != "output.weight" {
		t.Errorf("llama without lm_head: tie = %+v", llama.Tie)
	}
	if qwen3.Tie != nil {
		t.Errorf("qwen3 with lm_head: tie = %+v, want none", qwen3.Tie)
	}
}

// TestPlanConvertPhi4Mini holds the plan for Phi-4-mini's real tensor list (its index) to
// ExecuTorch's HF conversion (examples/models/phi_4_mini/convert_weights.py): the fused
// qkv_proj cut by sizes, 3072 query rows and 1024 each for key and value (24 and 8 heads
// of 128), gate_up_proj in equal halves with the gate first, and the output tied to the
// embedding, since the checkpoint has no lm_head.
func TestPlanConvertPhi4Mini(t *testing.T) {
	dir := filepath.Join("testdata", "hf", "Phi-4-mini-instruct")
	b, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json"))
	require.NoError(t, err)
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	require.NoError(t, json.Unmarshal(b, &idx))
	var names []string
	for n := range idx.WeightMap {
		names = append(names, n)
	}
	sort.Strings(names)
	c, err := PlanConvert(Arch{Family: "phi4mini", Layers: 32, Heads: 24, KVHeads: 8, HeadDim: 128, TiedEmbeddings: true, Tensors: names},
		[]string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}, "/w/checkpoint/consolidated.pth")
	require.NoError(t, err)
	assert.Equal(t, &Tie{From: "tok_embeddings.weight", To: "output.weight"}, c.Tie)
	assert.Equal(t, 32*9+3, c.ExpectTensors, "9 tensors a layer, the embedding, the norm and the tied output")
	for _, tc := range []struct {
		name string
		want Rule
	}{
		{"model.layers.31.self_attn.qkv_proj.weight", Rule{
			Split: []string{"layers.31.attention.wq.weight", "layers.31.attention.wk.weight", "layers.31.attention.wv.weight"},
			Rows:  []int{3072, 1024, 1024}}},
		{"model.layers.0.mlp.gate_up_proj.weight", Rule{Split: []string{"layers.0.feed_forward.w1.weight", "layers.0.feed_forward.w3.weight"}}},
		{"model.layers.0.mlp.down_proj.weight", Rule{To: "layers.0.feed_forward.w2.weight"}},
		{"model.layers.0.self_attn.o_proj.weight", Rule{To: "layers.0.attention.wo.weight"}},
		{"model.layers.0.input_layernorm.weight", Rule{To: "layers.0.attention_norm.weight"}},
		{"model.layers.0.post_attention_layernorm.weight", Rule{To: "layers.0.ffn_norm.weight"}},
		{"model.embed_tokens.weight", Rule{To: "tok_embeddings.weight"}},
		{"model.norm.weight", Rule{To: "norm.weight"}},
	} {
		assert.Empty(t, cmp.Diff(tc.want, c.Tensors[tc.name]), tc.name)
	}
	_, err = PlanConvert(Arch{Family: "phi4mini", Layers: 32, Heads: 24, KVHeads: 8, TiedEmbeddings: true, Tensors: names},
		[]string{"s"}, "/w/c.pth")
	assert.ErrorContains(t, err, "is cut by head_dim, which is 0", "no head_dim, no sizes to cut qkv_proj by")
}

// Qwen3-1.7B ships lm_head.weight although its config ties embeddings: the plan must use
// the stored head rather than tie.
func TestPlanConvertRealQwen3Index(t *testing.T) {
	dir := filepath.Join("testdata", "hf", "Qwen3-1.7B")
	b, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range idx.WeightMap {
		names = append(names, n)
	}
	sort.Strings(names)
	shards, err := ShardFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := PlanConvert(Arch{Family: "qwen3", Layers: 28, Heads: 16, KVHeads: 8, TiedEmbeddings: true, Tensors: names},
		shards, "/w/checkpoint/consolidated.pth")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tie != nil || c.ExpectTensors != 311 {
		t.Errorf("tie %+v, expect %d tensors; want no tie and 311", c.Tie, c.ExpectTensors)
	}
	c.Shards = []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
	golden.Check(t, filepath.Join("testdata", "plans", "qwen3-1.7b.json"), planJSON(t, c))
}

func TestPlanConvertErrors(t *testing.T) {
	good := func(f string) Arch {
		return Arch{Family: f, Layers: 2, Heads: 4, KVHeads: 2, TiedEmbeddings: true, Tensors: hfNames(f, 2, false, []string{"conv", "full_attention"})}
	}
	drop := func(a Arch, name string) Arch {
		var keep []string
		for _, n := range a.Tensors {
			if n != name {
				keep = append(keep, n)
			}
		}
		a.Tensors = keep
		return a
	}
	add := func(a Arch, names ...string) Arch {
		a.Tensors = append(append([]string{}, a.Tensors...), names...)
		return a
	}
	untied := good("qwen3")
	untied.TiedEmbeddings = false
	cases := []struct {
		name, output string
		arch         Arch
		want         string
	}{
		{"unknown family", "/w/c.pth", Arch{Family: "gemma3", Layers: 1, Heads: 1, KVHeads: 1}, `family "gemma3"`},
		{"unknown tensor", "/w/c.pth", add(good("qwen3"), "model.layers.0.self_attn.q_proj.lora_A"), "unknown tensor model.layers.0.self_attn.q_proj.lora_A"},
		{"unknown top tensor", "/w/c.pth", add(good("llama"), "model.vision_tower.weight"), "unknown tensor model.vision_tower.weight"},
		{"llama with bias", "/w/c.pth", add(good("llama"), "model.layers.0.self_attn.q_proj.bias"), "unknown tensor model.layers.0.self_attn.q_proj.bias"},
		{"layer beyond config", "/w/c.pth", add(good("qwen3"), "model.layers.2.mlp.up_proj.weight"), "layer 2, the model has 2"},
		{"bad layer index", "/w/c.pth", add(good("qwen3"), "model.layers.x.mlp.up_proj.weight"), `layer index "x"`},
		{"missing layer tensor", "/w/c.pth", drop(good("qwen2_5"), "model.layers.1.self_attn.k_proj.bias"), "layer 1 has 11 tensors, want 12"},
		{"missing layer", "/w/c.pth", func() Arch { a := good("qwen3"); a.Layers = 3; return a }(), "cover 2 layers, config says 3"},
		{"no embedding", "/w/c.pth", drop(good("qwen3"), "model.embed_tokens.weight"), "no tensor becomes tok_embeddings.weight"},
		{"untied without head", "/w/c.pth", untied, "tie_word_embeddings is false"},
		{"int8 in path", "/w/int8/c.pth", good("qwen3"), `contains "int8"`},
		{"8da4w in name", "/w/Qwen3-8da4w.pth", good("qwen3"), `contains "8da4w"`},
		{"bad heads", "/w/c.pth", func() Arch { a := good("qwen3"); a.KVHeads = 3; return a }(), "do not divide"},
		{"duplicate", "/w/c.pth", add(good("qwen3"), "model.norm.weight"), "listed twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanConvert(tc.arch, []string{"s"}, tc.output)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestShardFiles(t *testing.T) {
	single := t.TempDir()
	if err := os.WriteFile(filepath.Join(single, "model.safetensors"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	escaping := t.TempDir()
	if err := os.WriteFile(filepath.Join(escaping, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"../x.safetensors"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join("testdata", "hf", "Qwen3-1.7B")
	cases := []struct {
		name, dir string
		want      []string
		err       string
	}{
		{"index", real, []string{filepath.Join(real, "model-00001-of-00002.safetensors"), filepath.Join(real, "model-00002-of-00002.safetensors")}, ""},
		{"single", single, []string{filepath.Join(single, "model.safetensors")}, ""},
		{"none", t.TempDir(), nil, "neither"},
		{"escaping", escaping, nil, "not a file inside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ShardFiles(tc.dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// qwen35Tensors is the tensor list of a Qwen3.5 checkpoint as released
// (Qwen3_5ForConditionalGeneration, the names transformers 5.2.0 saves): the text model under
// model.language_model, a vision tower, an MTP head; layer 0 a gated DeltaNet, layer 1 full
// attention; no lm_head (tied).
func qwen35Tensors() []string {
	names := []string{"model.language_model.embed_tokens.weight", "model.language_model.norm.weight",
		"model.visual.patch_embed.proj.weight", "model.visual.blocks.0.attn.qkv.weight", "mtp.fc.weight", "mtp.layers.0.mlp.up_proj.weight"}
	for _, s := range []string{"linear_attn.in_proj_qkv.weight", "linear_attn.in_proj_z.weight", "linear_attn.in_proj_b.weight",
		"linear_attn.in_proj_a.weight", "linear_attn.conv1d.weight", "linear_attn.dt_bias", "linear_attn.A_log",
		"linear_attn.norm.weight", "linear_attn.out_proj.weight"} {
		names = append(names, "model.language_model.layers.0."+s)
	}
	for _, s := range []string{"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
		"self_attn.o_proj.weight", "self_attn.q_norm.weight", "self_attn.k_norm.weight"} {
		names = append(names, "model.language_model.layers.1."+s)
	}
	for l := range 2 {
		for _, s := range []string{"mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
			"input_layernorm.weight", "post_attention_layernorm.weight"} {
			names = append(names, fmt.Sprintf("model.language_model.layers.%d.%s", l, s))
		}
	}
	return names
}

// TestPlanConvertQwen35: the text model is mapped as ExecuTorch's own converter maps it
// (examples/models/qwen3_5/convert_weights.py), the vision tower and MTP head are dropped,
// and the output is tied to the embedding.
func TestPlanConvertQwen35(t *testing.T) {
	c, err := PlanConvert(Arch{Family: "qwen3_5", Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, TiedEmbeddings: true, Tensors: qwen35Tensors()},
		[]string{"model.safetensors"}, "/w/checkpoint/consolidated.pth")
	require.NoError(t, err)
	assert.Equal(t, &Tie{From: "tok_embeddings.weight", To: "output.weight"}, c.Tie)
	assert.Equal(t, 14+11+3, c.ExpectTensors, "a DeltaNet layer's 14, a full attention layer's 11, embedding, norm, tied output")
	for name, want := range map[string]Rule{
		"model.language_model.layers.0.linear_attn.in_proj_qkv.weight": {To: "layers.0.attention.in_proj_qkv.weight"},
		"model.language_model.layers.0.linear_attn.A_log":              {To: "layers.0.attention.A_log"},
		"model.language_model.layers.0.linear_attn.norm.weight":        {To: "layers.0.attention.norm.weight"},
		"model.language_model.layers.1.self_attn.q_proj.weight":        {To: "layers.1.attention.wq.weight"},
		"model.language_model.layers.1.self_attn.q_norm.weight":        {To: "layers.1.attention.q_norm_fn.weight"},
		"model.language_model.embed_tokens.weight":                     {To: "tok_embeddings.weight"},
		"model.visual.blocks.0.attn.qkv.weight":                        {Ignore: true},
		"mtp.layers.0.mlp.up_proj.weight":                              {Ignore: true},
	} {
		assert.Empty(t, cmp.Diff(want, c.Tensors[name]), name)
	}
	// A layer missing its DeltaNet projection stops before torch loads anything.
	short := slices.DeleteFunc(qwen35Tensors(), func(n string) bool { return strings.Contains(n, "layers.1.self_attn") })
	_, err = PlanConvert(Arch{Family: "qwen3_5", Layers: 2, Heads: 4, KVHeads: 2, TiedEmbeddings: true, Tensors: short}, []string{"s"}, "/w/c.pth")
	assert.ErrorContains(t, err, "layer 1 has 5 tensors, want at least 11")
}
