package family

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/experimentalmachines/exe-expo/pkg/model"
)

// LLMPlan is what export_llm needs for a family: the example model class (it only picks
// ExecuTorch's example directory), the checkpoint converter, and the params JSON that
// defines the architecture.
type LLMPlan struct {
	ModelClass string         `json:"model_class"`
	Converter  string         `json:"converter"`
	Params     map[string]any `json:"params"`
	// HFRope is true when the model keeps Hugging Face's rotate-half RoPE layout.
	HFRope bool `json:"hf_rope"`
}

// Unsupported is a refusal: the sentence says why, in words a user understands.
type Unsupported struct{ Reason string }

func (u *Unsupported) Error() string { return u.Reason }

func refuse(format string, args ...any) error {
	return &Unsupported{Reason: fmt.Sprintf(format, args...)}
}

// ropeScaling returns rope_scaling (or transformers v5's rope_parameters) unless it is the
// default rotation.
func ropeScaling(c *model.Config) map[string]any {
	for _, key := range []string{"rope_scaling", "rope_parameters"} {
		m := c.Map(key)
		if m == nil {
			continue
		}
		t, _ := m["rope_type"].(string)
		if t == "" {
			t, _ = m["type"].(string)
		}
		if t == "" || t == "default" {
			continue
		}
		return m
	}
	return nil
}

func scalingType(m map[string]any) string {
	if t, ok := m["rope_type"].(string); ok {
		return t
	}
	t, _ := m["type"].(string)
	return t
}

// llama3Scaling is the only scaling export_llm's use_scaled_rope implements.
var llama3Scaling = map[string]float64{"factor": 32, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}

func number(c *model.Config, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := c.Text[k].(json.Number); ok {
			return v, true
		}
	}
	return nil, false
}

// XNNPACKPlan builds the export_llm plan shared by XNNPACK and Vulkan, or refuses.
func XNNPACKPlan(f *Family, c *model.Config) (*LLMPlan, error) {
	if u, ok := f.Unsupported["xnnpack"]; ok {
		return nil, refuse("%s", u)
	}
	a, err := model.ArchOf(c)
	if err != nil {
		return nil, refuse("%v", err)
	}
	if act := c.String("hidden_act"); act != "" && act != "silu" {
		return nil, refuse("hidden_act %q: export_llm's feed-forward is SiLU only", act)
	}
	if v, _ := c.Bool("use_sliding_window"); v {
		return nil, refuse("the config enables sliding-window attention, which export_llm's KV cache does not implement")
	}
	if v, _ := c.Bool("mlp_bias"); v {
		return nil, refuse("the feed-forward has biases (mlp_bias), which export_llm's model has no place for")
	}
	theta, ok := number(c, "rope_theta")
	if !ok {
		if rp := c.Map("rope_parameters"); rp != nil {
			theta, ok = rp["rope_theta"].(json.Number)
		}
	}
	if !ok {
		return nil, refuse("config has no rope_theta")
	}
	eps, ok := number(c, "rms_norm_eps", "norm_eps")
	if !ok {
		return nil, refuse("config has no rms_norm_eps")
	}
	p := map[string]any{
		"dim": a.Dim, "ffn_dim_multiplier": 1, "hidden_dim": a.Intermediate, "n_heads": a.Heads,
		"head_dim": a.HeadDim, "n_kv_heads": a.KVHeads, "n_layers": a.Layers, "norm_eps": eps,
		"rope_theta": theta, "vocab_size": a.Vocab,
	}
	plan := &LLMPlan{Params: p}
	scaling := ropeScaling(c)
	attnBias, _ := c.Bool("attention_bias")
	switch f.Key {
	case "qwen3":
		if scaling != nil {
			return nil, refuse("RoPE scaling %q is not implemented by export_llm's Qwen3 path", scalingType(scaling))
		}
		if attnBias {
			return nil, refuse("attention_bias is set, and the Qwen3 path has no attention biases")
		}
		plan.ModelClass, plan.Converter, plan.HFRope = "qwen3_1_7b", "qwen3", true
		setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false, "use_qk_norm", true, "qk_norm_before_rope", true)
	case "qwen2_5":
		if scaling != nil {
			return nil, refuse("RoPE scaling %q is not implemented by export_llm's Qwen2.5 path", scalingType(scaling))
		}
		plan.ModelClass, plan.Converter, plan.HFRope = "qwen2_5_1_5b", "qwen2", true
		setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", true)
	case "lfm2":
		if err := lfm2Plan(c, a, scaling, plan); err != nil {
			return nil, err
		}
	case "llama":
		if err := llamaPlan(scaling, attnBias, plan); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("family %s has no export_llm recipe", f.Key)
	}
	return plan, nil
}

func setAll(p map[string]any, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i].(string)] = kv[i+1]
	}
}

func llamaPlan(scaling map[string]any, attnBias bool, plan *LLMPlan) error {
	if attnBias {
		return refuse("attention_bias is set, and export_llm's Llama path has no attention biases")
	}
	plan.Converter = "llama"
	if scaling == nil {
		plan.ModelClass = "smollm2"
		setAll(plan.Params, "use_scaled_rope", false, "use_hf_rope", false, "attention_qkv_bias", false)
		return nil
	}
	if t := scalingType(scaling); t != "llama3" {
		return refuse("RoPE scaling %q: export_llm implements only Llama 3's", t)
	}
	for k, want := range llama3Scaling {
		got, ok := scaling[k].(json.Number)
		f, err := got.Float64()
		if !ok || err != nil || math.Abs(f-want) > 1e-9 {
			return refuse("Llama 3 RoPE scaling with %s = %v: export_llm's use_scaled_rope is fixed at %v", k, scaling[k], want)
		}
	}
	plan.ModelClass = "llama3_2"
	setAll(plan.Params, "use_scaled_rope", true, "use_hf_rope", false, "attention_qkv_bias", false)
	return nil
}

func lfm2Plan(c *model.Config, a model.Arch, scaling map[string]any, plan *LLMPlan) error {
	if scaling != nil {
		return refuse("RoPE scaling %q is not implemented by export_llm's LFM2 path", scalingType(scaling))
	}
	if a.LayerTypes == nil {
		return refuse("LFM2 config has no layer_types (nor full_attn_idxs)")
	}
	for i, t := range a.LayerTypes {
		if t != "conv" && t != "full_attention" {
			return refuse("layer %d is of type %q; export_llm's LFM2 knows conv and full_attention", i, t)
		}
	}
	if v, _ := c.Bool("conv_bias"); v {
		return refuse("conv_bias is set, and export_llm's LFM2 short convolution has no bias")
	}
	plan.ModelClass, plan.Converter, plan.HFRope = "lfm2_5_1_2b", "lfm2", true
	p := plan.Params
	p["hidden_dim"] = a.FFNDim
	delete(p, "head_dim")
	types := make([]string, len(a.LayerTypes))
	copy(types, a.LayerTypes)
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "use_qk_norm", true, "qk_norm_before_rope", true, "layer_types", types)
	return nil
}

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
	if u, ok := f.Unsupported["mediatek"]; ok {
		return nil, refuse("%s", u)
	}
	p, ok := mtkScripts[f.Key]
	if !ok {
		return nil, refuse("the MediaTek scripts have no model definition for %s", f.Key)
	}
	if mt := c.String("model_type"); mt != p.ModelType {
		return nil, refuse("model_type %q, the MediaTek %s path expects %q", mt, p.Script, p.ModelType)
	}
	a, err := model.ArchOf(c)
	if err != nil {
		return nil, refuse("%v", err)
	}
	if s := ropeScaling(c); s != nil {
		if f.Key != "llama" || scalingType(s) != "llama3" {
			return nil, refuse("RoPE scaling %q is not validated on the MediaTek scripts", scalingType(s))
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
