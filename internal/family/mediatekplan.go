package family

import (
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// MTKPlan is how ExecuTorch's examples/mediatek scripts take a family.
type MTKPlan struct {
	Script       string `json:"script"`
	Preformatter string `json:"preformatter"`
	ModelType    string `json:"model_type"`
	Chunks       int    `json:"num_chunks"`
	// Streaming is true for the patched lfm2.py that calibrates one prompt at a time.
	Streaming bool `json:"streaming"`
	// Tokenizer, when set, is written into the weights' config.json.
	Tokenizer string `json:"tokenizer,omitempty"`
}

var mtkScripts = map[string]MTKPlan{
	"qwen3":   {Script: "qwen.py", Preformatter: "qwen3.json", ModelType: "qwen3"},
	"qwen2_5": {Script: "qwen.py", Preformatter: "qwen.json", ModelType: "qwen2"},
	"lfm2":    {Script: "lfm2.py", Preformatter: "qwen3.json", ModelType: "lfm2", Streaming: true},
	"llama":   {Script: "llama.py", Preformatter: "llama3.json", ModelType: "llama", Tokenizer: "pretrained_fast"},
}

// MediaTekPlan picks the script, preformatter and chunk count, or refuses.
func MediaTekPlan(f *Family, c *model.Config, maxChunks int) (*MTKPlan, error) {
	p, ok := mtkScripts[f.Key]
	if !ok {
		return nil, refuse("the MediaTek scripts have no model definition for %s", f.Key)
	}
	ft, err := c.Features()
	if err != nil {
		return nil, refuse("%v", err)
	}
	if ft.ModelType != p.ModelType {
		return nil, refuse("model_type %q, the MediaTek %s path expects %q", ft.ModelType, p.Script, p.ModelType)
	}
	a, err := c.Arch()
	if err != nil {
		return nil, refuse("%v", err)
	}
	if t := a.Rope.Type; t != "" {
		if f.Key != "llama" || t != "llama3" {
			return nil, refuse("RoPE scaling %q is not validated on the MediaTek scripts", t)
		}
	} else if f.Key == "llama" {
		p.Preformatter = "qwen.json" // SmolLM2 speaks ChatML
	}
	p.Chunks = MTKChunks(int(a.Layers), maxChunks)
	return &p, nil
}

// MTKChunks is the largest n ≤ min(maxChunks, layers) that divides the layers evenly
// (28 → 4, 30 → 3, 26 → 2).
func MTKChunks(layers, maxChunks int) int {
	for n := min(maxChunks, layers); n > 1; n-- {
		if layers%n == 0 {
			return n
		}
	}
	return 1
}
