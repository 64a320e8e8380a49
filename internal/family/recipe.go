package family

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// LLMPlan is what export_llm needs for a family: the model class (ModelClass, see
// LLMClasses), the checkpoint converter, and the params JSON that defines the architecture.
type LLMPlan struct {
	ModelClass string         `json:"model_class"`
	Converter  string         `json:"converter"`
	Params     map[string]any `json:"params"`
	// HFRope is true when the model keeps Hugging Face's rotate-half RoPE layout.
	HFRope bool `json:"hf_rope"`
	// MaxWindow, when set, is the largest window the params export faithfully, and
	// WindowLimit why: export_llm fixes in the file what transformers decides per call
	// (Phi-4-mini's LongRoPE factors, phi4miniPlan). A window above it is skipped by plan
	// and refused by export, never built.
	MaxWindow   int    `json:"max_window,omitempty"`
	WindowLimit string `json:"window_limit,omitempty"`
}

// Unsupported is a refusal: the sentence says why, in words a user understands.
type Unsupported struct{ Reason string }

func (u *Unsupported) Error() string { return u.Reason }

func refuse(format string, args ...any) error {
	return &Unsupported{Reason: fmt.Sprintf(format, args...)}
}

// XNNPACKPlan builds the export_llm plan shared by XNNPACK and Vulkan, or refuses.
func XNNPACKPlan(f *Family, c *model.Config) (*LLMPlan, error) {
	a, err := c.Arch()
	if err != nil {
		return nil, refuse("%v", err)
	}
	if a.HiddenAct != "" && a.HiddenAct != "silu" {
		return nil, refuse("hidden_act %q: export_llm's feed-forward is SiLU only", a.HiddenAct)
	}
	if a.SlidingWindow {
		return nil, refuse("the config enables sliding-window attention, which export_llm's KV cache does not implement")
	}
	if a.MLPBias {
		return nil, refuse("the feed-forward has biases (mlp_bias), which export_llm's model has no place for")
	}
	if a.RopeTheta == "" {
		return nil, refuse("config has no rope_theta")
	}
	if a.NormEps == "" {
		return nil, refuse("config has no rms_norm_eps")
	}
	p := map[string]any{
		"dim": a.Dim, "ffn_dim_multiplier": 1, "hidden_dim": a.Intermediate, "n_heads": a.Heads,
		"head_dim": a.HeadDim, "n_kv_heads": a.KVHeads, "n_layers": a.Layers, "norm_eps": a.NormEps,
		"rope_theta": a.RopeTheta, "vocab_size": a.Vocab,
	}
	plan := &LLMPlan{Params: p}
	scaling := a.Rope
	switch f.Key {
	case "qwen3":
		if scaling.Type != "" {
			return nil, refuse("RoPE scaling %q is not implemented by export_llm's Qwen3 path", scaling.Type)
		}
		if a.AttentionBias {
			return nil, refuse("attention_bias is set, and the Qwen3 path has no attention biases")
		}
		plan.ModelClass, plan.Converter, plan.HFRope = modelClass(f.Key, shapeOf(a, a.Intermediate)), "qwen3", true
		setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false, "use_qk_norm", true, "qk_norm_before_rope", true)
	case "qwen2_5":
		if scaling.Type != "" {
			return nil, refuse("RoPE scaling %q is not implemented by export_llm's Qwen2.5 path", scaling.Type)
		}
		plan.ModelClass, plan.Converter, plan.HFRope = modelClass(f.Key, shapeOf(a, a.Intermediate)), "qwen2", true
		setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", true)
	case "lfm2":
		if err := lfm2Plan(a, plan); err != nil {
			return nil, err
		}
	case "llama":
		if err := llamaPlan(scaling, a.AttentionBias, plan); err != nil {
			return nil, err
		}
	case "phi4mini":
		if err := phi4miniPlan(a, plan); err != nil {
			return nil, err
		}
	case "qwen3_5":
		if err := qwen35Plan(a, plan); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("family %s has no export_llm recipe", f.Key)
	}
	return plan, nil
}

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

// Llama's registered classes go by generation: llama3_2 for Llama 3's scaled RoPE (the class
// the pinned ExecuTorch gives rope_scale_factor 32, examples/models/llama/model.py), smollm2 for
// the unscaled SmolLM2.
const llamaScaledClass, llamaClass = "llama3_2", "smollm2"

func llamaPlan(scaling model.RopeScaling, attnBias bool, plan *LLMPlan) error {
	if attnBias {
		return refuse("attention_bias is set, and export_llm's Llama path has no attention biases")
	}
	plan.Converter = "llama"
	if scaling.Type == "" {
		plan.ModelClass = llamaClass
		setAll(plan.Params, "use_scaled_rope", false, "use_hf_rope", false, "attention_qkv_bias", false)
		return nil
	}
	if scaling.Type != "llama3" {
		return refuse("RoPE scaling %q: export_llm implements only Llama 3's", scaling.Type)
	}
	for _, n := range llama3Scaling(scaling) {
		if n.got == "" {
			return refuse("Llama 3 RoPE scaling without %s: export_llm's use_scaled_rope is fixed at %v", n.key, n.want)
		}
		// model checked that every scaling number parses
		if f, _ := strconv.ParseFloat(n.got, 64); math.Abs(f-n.want) > 1e-9 {
			return refuse("Llama 3 RoPE scaling with %s = %s: export_llm's use_scaled_rope is fixed at %v", n.key, n.got, n.want)
		}
	}
	plan.ModelClass = llamaScaledClass
	setAll(plan.Params, "use_scaled_rope", true, "use_hf_rope", false, "attention_qkv_bias", false)
	return nil
}

// scaleNumber is one number of a Llama 3 RoPE scaling: as written ("" when absent), and
// the only value export_llm's use_scaled_rope implements.
type scaleNumber struct {
	key, got string
	want     float64
}

// llama3Scaling lists the scaling's numbers in the order a refusal checks them.
func llama3Scaling(r model.RopeScaling) []scaleNumber {
	orig := ""
	if r.OriginalMaxPositions != 0 {
		orig = strconv.FormatInt(r.OriginalMaxPositions, 10)
	}
	return []scaleNumber{
		{"factor", r.Factor.String(), 32},
		{"low_freq_factor", r.LowFreqFactor.String(), 1},
		{"high_freq_factor", r.HighFreqFactor.String(), 4},
		{"original_max_position_embeddings", orig, 8192},
	}
}

// LFM2ConvKernel is the short convolution's kernel length (conv_L_cache) that the pinned
// ExecuTorch builds, and the one every LFM2 release uses; a config asking for another is refused
// rather than exported with a kernel that drops or invents taps.
const LFM2ConvKernel = 3

func lfm2Plan(a model.Arch, plan *LLMPlan) error {
	if a.Rope.Type != "" {
		return refuse("RoPE scaling %q is not implemented by export_llm's LFM2 path", a.Rope.Type)
	}
	if a.LayerTypes == nil {
		return refuse("LFM2 config has no layer_types (nor full_attn_idxs)")
	}
	for i, t := range a.LayerTypes {
		if t != "conv" && t != "full_attention" {
			return refuse("layer %d is of type %q; export_llm's LFM2 knows conv and full_attention", i, t)
		}
	}
	if a.ConvBias {
		return refuse("conv_bias is set, and export_llm's LFM2 short convolution has no bias")
	}
	// The pinned ExecuTorch hard-codes the kernel (examples/models/lfm2/short_conv.py:92,
	// "self.L_cache = 3  # hardcode 3 for now"); absent means transformers' default, 3.
	if k := a.ConvLCache; k != 0 && k != LFM2ConvKernel {
		return refuse("conv_L_cache is %d, and export_llm builds LFM2's short convolution with a kernel of %d", k, LFM2ConvKernel)
	}
	plan.ModelClass, plan.Converter, plan.HFRope = modelClass("lfm2", shapeOf(a, a.FFNDim)), "lfm2", true
	p := plan.Params
	p["hidden_dim"] = a.FFNDim
	delete(p, "head_dim")
	types := make([]string, len(a.LayerTypes))
	copy(types, a.LayerTypes)
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "use_qk_norm", true, "qk_norm_before_rope", true, "layer_types", types)
	return nil
}

// phi4miniPlan is Phi-4-mini's params, as ExecuTorch's own (examples/models/phi_4_mini/
// config/config.json) with one key left out. Phi keeps HF's rotate-half RoPE over the first
// partial_rotary_factor of each head (use_hf_rope; export_llm's other RoPE has no
// LongRoPE), and LongRoPE's factors go in as written: export_llm divides the frequencies by
// one list, and scales cos and sin by sqrt(1 + ln(max/original) / ln(original)), 1.19 for
// 131,072 / 4,096, as transformers does (docs/research/new-families.md, B).
//
// Which list is the catch. transformers picks per call: the short factors while the
// sequence is at most original_max_position_embeddings (4,096) long, the long ones past
// it. export_llm picks once, for the whole file, by the length of its RoPE table: the long
// factors when the table is longer than 4,096 positions. The table is the window, or twice
// the window when ffn_dim_multiplier is set (a key ExecuTorch's params carry and
// export_llm reads for nothing else once hidden_dim is given), so ExecuTorch's params file
// would switch a 4k file to the long factors. Left out, a window up to 4,096 gets the short
// factors at every position, as every conversation that fits it does in transformers;
// a larger window would rotate every prompt, the shortest included, by the long factors,
// which transformers uses only once a conversation passes 4,096 tokens. Those windows are
// not built (MaxWindow).
func phi4miniPlan(a model.Arch, plan *LLMPlan) error {
	if a.AttentionBias {
		return refuse("attention_bias is set, and export_llm's Phi-4-mini path has no attention biases")
	}
	plan.ModelClass, plan.Converter, plan.HFRope = modelClass("phi4mini", shapeOf(a, a.Intermediate)), "phi4mini", true
	p := plan.Params
	delete(p, "ffn_dim_multiplier")
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false)
	rotary := a.HeadDim
	if a.PartialRotary != "" {
		f, _ := strconv.ParseFloat(a.PartialRotary.String(), 64) // model checked it is in (0, 1]
		rotary = int64(float64(a.HeadDim) * f)                   // as ExecuTorch truncates it
		p["partial_rotary_factor"] = a.PartialRotary
	}
	r := a.Rope
	switch r.Type {
	case "":
		return nil
	case "longrope":
	default:
		return refuse("RoPE scaling %q: export_llm's Phi-4-mini path implements LongRoPE only", r.Type)
	}
	if r.OriginalMaxPositions == 0 || a.MaxPositions == 0 {
		return refuse("LongRoPE without original_max_position_embeddings and max_position_embeddings: export_llm could not tell when its long factors apply")
	}
	for _, l := range []struct {
		name    string
		factors []json.Number
	}{{"short_factor", r.ShortFactors}, {"long_factor", r.LongFactors}} {
		if int64(len(l.factors)) != rotary/2 {
			return refuse("LongRoPE %s has %d factors, and export_llm needs one per rotated pair: %d for %d rotated dimensions", l.name, len(l.factors), rotary/2, rotary)
		}
	}
	setAll(p, "rope_scaling_short_factor", slices.Clone(r.ShortFactors), "rope_scaling_long_factor", slices.Clone(r.LongFactors),
		"original_max_position_embeddings", r.OriginalMaxPositions, "max_position_embeddings", a.MaxPositions)
	plan.MaxWindow = int(r.OriginalMaxPositions)
	plan.WindowLimit = fmt.Sprintf("export_llm fixes LongRoPE's factors per file, and a longer window would rotate every position by the long factors, which transformers applies only once a conversation passes %s tokens (original_max_position_embeddings)",
		Commas(r.OriginalMaxPositions))
	return nil
}

// qwen35Plan is Qwen3.5's text model, with the keys of ExecuTorch's own params files
// (examples/models/qwen3_5/config/*_config.json): HF's rotate-half RoPE over the first
// partial_rotary_factor of each head, qk-norm before RoPE, the output gate of the full
// attention layers (use_q_gate), the 1 + weight RMSNorm (rms_norm_add_unit_offset), and
// the gated DeltaNet's linear_* shapes with the per-layer kinds. ExecuTorch's files carry no
// ffn_dim_multiplier, so the RoPE table is the window once, as here. Text input gives
// mrope's three position streams the same position, which is plain RoPE.
func qwen35Plan(a model.Arch, plan *LLMPlan) error {
	if a.Rope.Type != "" {
		return refuse("RoPE scaling %q is not implemented by export_llm's Qwen3.5 path", a.Rope.Type)
	}
	if a.AttentionBias {
		return refuse("attention_bias is set, and export_llm's Qwen3.5 path has no attention biases")
	}
	if len(a.LayerTypes) != int(a.Layers) {
		return refuse("Qwen3.5 config has %d layer_types for %d layers", len(a.LayerTypes), a.Layers)
	}
	for i, t := range a.LayerTypes {
		if t != model.LayerLinear && t != "full_attention" {
			return refuse("layer %d is of type %q; export_llm's Qwen3.5 knows linear_attention and full_attention", i, t)
		}
	}
	d := a.DeltaNet
	if d.KeyHeads <= 0 || d.ValueHeads <= 0 || d.KeyHeadDim <= 0 || d.ValueHeadDim <= 0 || d.ConvKernel <= 0 {
		return refuse("Qwen3.5 config lacks the gated DeltaNet's linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim or linear_conv_kernel_dim")
	}
	if d.ValueHeads%d.KeyHeads != 0 {
		return refuse("%d DeltaNet value heads do not divide into %d key heads", d.ValueHeads, d.KeyHeads)
	}
	plan.ModelClass, plan.Converter, plan.HFRope = modelClass("qwen3_5", shapeOf(a, a.Intermediate)), "qwen3_5", true
	p := plan.Params
	delete(p, "ffn_dim_multiplier")
	types := slices.Clone(a.LayerTypes)
	setAll(p, "use_scaled_rope", false, "use_hf_rope", true, "attention_qkv_bias", false, "use_qk_norm", true,
		"qk_norm_before_rope", true, "attention_type", "mha", "use_q_gate", a.QGate, "rms_norm_add_unit_offset", true,
		"linear_conv_kernel_dim", d.ConvKernel, "linear_key_head_dim", d.KeyHeadDim, "linear_value_head_dim", d.ValueHeadDim,
		"linear_num_key_heads", d.KeyHeads, "linear_num_value_heads", d.ValueHeads, "layer_types", types)
	if a.PartialRotary != "" {
		p["partial_rotary_factor"] = a.PartialRotary
	}
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
