package family_test

import (
	"encoding/json"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelClass: export_llm's model_class is the registered name of the model's own
// shape, the whole shape deciding; a shape ExecuTorch does not register takes the family's
// stand-in class rather than a refusal. internal/recipe's real-source test holds LLMClasses to
// ExecuTorch's params files.
func TestModelClass(t *testing.T) {
	tests := []struct {
		name, id string
		spoil    func(text map[string]any)
		class    string
	}{
		{name: "Qwen3-0.6B", id: "Qwen/Qwen3-0.6B", class: "qwen3_0_6b"},
		{name: "Qwen3-1.7B", id: "Qwen/Qwen3-1.7B", class: "qwen3_1_7b"},
		{name: "Qwen3-4B", id: "Qwen/Qwen3-4B", class: "qwen3_4b"},
		{name: "Qwen3-8B is not registered", id: "Qwen/Qwen3-8B", class: "qwen3_1_7b"},
		{name: "one number off is another shape", id: "Qwen/Qwen3-0.6B", class: "qwen3_1_7b",
			spoil: func(m map[string]any) { m["vocab_size"] = json.Number("151937") }},
		{name: "Qwen2.5-0.5B", id: "Qwen/Qwen2.5-0.5B-Instruct", class: "qwen2_5_0_5b"},
		{name: "Qwen2.5-1.5B", id: "Qwen/Qwen2.5-1.5B", class: "qwen2_5_1_5b"},
		{name: "Qwen2.5 of an unregistered depth", id: "Qwen/Qwen2.5-0.5B-Instruct", class: "qwen2_5_1_5b",
			spoil: func(m map[string]any) { m["num_hidden_layers"] = json.Number("36") }},
		{name: "LFM2.5-1.2B (built feed-forward width decides)", id: "LiquidAI/LFM2.5-1.2B-Base", class: "lfm2_5_1_2b"},
		{name: "LFM2.5-350M", id: "LiquidAI/LFM2.5-1.2B-Base", class: "lfm2_5_350m", spoil: func(m map[string]any) {
			m["hidden_size"], m["num_attention_heads"] = json.Number("1024"), json.Number("16")
			m["intermediate_size"], m["block_ff_dim"] = json.Number("6656"), json.Number("6656")
		}},
		{name: "Llama 3.2 goes by generation", id: "meta-llama/Llama-3.2-1B-Instruct", class: "llama3_2"},
		{name: "SmolLM2-360M", id: "HuggingFaceTB/SmolLM2-360M-Instruct", class: "smollm2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := snap(t, tc.id)
			if tc.spoil != nil {
				src.Config.Edit(tc.spoil)
			}
			p, err := family.XNNPACKPlan(family.ByArchitecture(src.Config.Architectures()), src.Config)
			require.NoError(t, err)
			assert.Equal(t, tc.class, p.ModelClass)
			assert.Contains(t, family.ModelClasses(), p.ModelClass, "ModelClasses lists every class a plan names")
		})
	}
}

// TestLLMClassesDistinct: no two registered classes of a family share a shape, or the
// first would shadow the second.
func TestLLMClassesDistinct(t *testing.T) {
	seen := map[family.Shape]string{}
	for _, c := range family.LLMClasses {
		require.NotNil(t, family.ByKey(c.Family), "%s names family %q", c.Name, c.Family)
		other, dup := seen[c.Shape]
		assert.False(t, dup, "%s has the shape of %s", c.Name, other)
		seen[c.Shape] = c.Name
	}
}
