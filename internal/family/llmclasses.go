package family

import (
	"slices"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// LLMClass is a model that the pinned ExecuTorch's export_llm registers by name (ModelType in
// extension/llm/export/config/llm_config.py), with the shape ExecuTorch's own params file
// gives it. Our params define the architecture either way, but the name is what export_llm
// downloads when it is handed no checkpoint and what it names its intermediate files after,
// so a model is exported under the class whose shape is its own.
type LLMClass struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	// Params is ExecuTorch's params file for the class, relative to its source tree; the
	// real-source test (internal/recipe) holds Shape to it.
	Params string `json:"params"`
	Shape  Shape  `json:"shape"`
}

// Shape is the sizes that tell one registered model from another, under the params
// file's names.
type Shape struct {
	Dim     int64 `json:"dim"`
	Hidden  int64 `json:"hidden_dim"`
	Heads   int64 `json:"n_heads"`
	KVHeads int64 `json:"n_kv_heads"`
	Layers  int64 `json:"n_layers"`
	Vocab   int64 `json:"vocab_size"`
}

// LLMClasses are the registered classes of the families export_llm builds per size. The
// lfm2 family takes only LFM2.5 releases (its name rule), so LFM2's own classes, whose
// shapes are the same, are not listed. Llama's classes go by generation, not size
// (llamaPlan).
var LLMClasses = []LLMClass{
	{"qwen3_0_6b", "qwen3", "examples/models/qwen3/config/0_6b_config.json", Shape{1024, 3072, 16, 8, 28, 151936}},
	{"qwen3_1_7b", "qwen3", "examples/models/qwen3/config/1_7b_config.json", Shape{2048, 6144, 16, 8, 28, 151936}},
	{"qwen3_4b", "qwen3", "examples/models/qwen3/config/4b_config.json", Shape{2560, 9728, 32, 8, 36, 151936}},
	{"qwen2_5_0_5b", "qwen2_5", "examples/models/qwen2_5/config/0_5b_config.json", Shape{896, 4864, 14, 2, 24, 151936}},
	{"qwen2_5_1_5b", "qwen2_5", "examples/models/qwen2_5/config/1_5b_config.json", Shape{1536, 8960, 12, 2, 28, 151936}},
	{"lfm2_5_350m", "lfm2", "examples/models/lfm2/config/lfm2_5_350m_config.json", Shape{1024, 4608, 16, 8, 16, 65536}},
	{"lfm2_5_1_2b", "lfm2", "examples/models/lfm2/config/lfm2_5_1_2b_config.json", Shape{2048, 8192, 32, 8, 16, 65536}},
	{"phi_4_mini", "phi4mini", "examples/models/phi_4_mini/config/config.json", Shape{3072, 8192, 24, 8, 32, 200064}},
	{"qwen3_5_0_8b", "qwen3_5", "examples/models/qwen3_5/config/0_8b_config.json", Shape{1024, 3584, 8, 2, 24, 248320}},
	{"qwen3_5_2b", "qwen3_5", "examples/models/qwen3_5/config/2b_config.json", Shape{2048, 6144, 8, 2, 24, 248320}},
	{"qwen3_5_4b", "qwen3_5", "examples/models/qwen3_5/config/4b_config.json", Shape{2560, 9216, 16, 4, 32, 248320}},
}

// unregisteredClass is the class a family's model takes when ExecuTorch registers none of
// its shape (Qwen2.5-3B; LFM2.5-2.6B, which the reference system exported under
// lfm2_5_1_2b): the params still define the architecture, which export_llm builds whatever
// the class, so such a model is exported rather than refused.
var unregisteredClass = map[string]string{"qwen3": "qwen3_1_7b", "qwen2_5": "qwen2_5_1_5b", "lfm2": "lfm2_5_1_2b", "phi4mini": "phi_4_mini", "qwen3_5": "qwen3_5_0_8b"}

// ModelClasses lists every class XNNPACKPlan can name, for tests that hold them to
// ExecuTorch's registry.
func ModelClasses() []string {
	names := []string{llamaScaledClass, llamaClass}
	for _, c := range LLMClasses {
		names = append(names, c.Name)
	}
	for _, fam := range []string{"qwen3", "qwen2_5", "lfm2", "phi4mini", "qwen3_5"} {
		if !slices.Contains(names, unregisteredClass[fam]) {
			names = append(names, unregisteredClass[fam])
		}
	}
	return names
}

func shapeOf(a model.Arch, hidden int64) Shape {
	return Shape{Dim: a.Dim, Hidden: hidden, Heads: a.Heads, KVHeads: a.KVHeads, Layers: a.Layers, Vocab: a.Vocab}
}

// modelClass is the registered class of the family's model with this shape.
func modelClass(family string, s Shape) string {
	for _, c := range LLMClasses {
		if c.Family == family && c.Shape == s {
			return c.Name
		}
	}
	return unregisteredClass[family]
}

func setAll(p map[string]any, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i].(string)] = kv[i+1]
	}
}
