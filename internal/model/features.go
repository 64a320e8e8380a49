package model

import (
	"encoding/json"
	"strconv"
)

// Features are the switches and constants of config.json that the recipes and eligibility
// read besides the sizes. They are decoded and checked here, in one place, so that every
// reader applies the same fallbacks (rope_parameters after rope_scaling, norm_eps after
// rms_norm_eps) and no other package interprets raw keys.
type Features struct {
	// ModelType is model_type, text_config's (gemma3_text) before the top level's: the
	// MediaTek scripts are chosen by it, and LFM2's feed-forward rule applies by it.
	ModelType string
	// HiddenAct is hidden_act; empty when absent, which transformers reads as SiLU.
	HiddenAct string
	// RopeTheta is rope_theta, or transformers v5's rope_parameters.rope_theta, exactly as
	// written (1000000 or 1000000.0): export_llm's params JSON takes it verbatim, and
	// ExecuTorch's own params files keep the checkpoint's spelling. Empty when absent.
	RopeTheta json.Number
	// NormEps is rms_norm_eps, or LFM2's norm_eps, exactly as written, for the same reason.
	NormEps json.Number
	// Rope is the RoPE scaling; its Type is empty for the default rotation.
	Rope RopeScaling
	// AttentionBias, MLPBias and ConvBias say the checkpoint holds biases that export_llm's
	// models have no place for (Qwen2.5's q/k/v biases are the one kind it builds).
	AttentionBias, MLPBias, ConvBias bool
	// ConvLCache is LFM2's conv_L_cache, the kernel length of the short convolution (3 in
	// every release); 0 when absent, which transformers reads as 3. ExecuTorch builds the
	// kernel at 3 whatever the config says, so a recipe refuses any other length.
	ConvLCache int64
	// SlidingWindow is use_sliding_window: Qwen's switch for sliding-window attention,
	// which export_llm's KV cache does not implement. A sliding_window size alone does not
	// enable it.
	SlidingWindow bool
	// MaxPositions is max_position_embeddings, the longest context the model was trained
	// for; 0 when absent.
	MaxPositions int64
	// Experts is true when a mixture-of-experts key (num_experts, num_local_experts,
	// n_routed_experts, moe_intermediate_size) is set to anything but 0 or false.
	Experts bool
	// Vision is true when the top level holds a vision_config, as multimodal wrappers do.
	Vision bool
	// Quantized is true when the top level holds a quantization_config: the weights are
	// not the original bf16/fp16 ones. QuantMethod is its quant_method, when a string.
	Quantized   bool
	QuantMethod string
	// PartialRotary is partial_rotary_factor (or rope_parameters'), as written: the share
	// of head_dim that RoPE rotates (Phi-4-mini 0.75, Qwen3.5 0.25). Empty when absent, which
	// means all of it.
	PartialRotary json.Number
	// QGate is attn_output_gate: Qwen3.5's full-attention layers gate their output with a
	// second query-sized projection (ExecuTorch's use_q_gate).
	QGate bool
	// NoRopeLayers is SmolLM3's no_rope_layers, one entry a layer: 1 where the layer
	// applies RoPE, 0 where it does not (every fourth). Nil when absent.
	NoRopeLayers []int64
}

// RopeScaling is a RoPE scaling other than the default rotation. export_llm implements
// one (Llama 3's, with fixed numbers), so recipes compare its type and numbers. The
// factors keep their written form (8.0) for refusals to quote; each is empty when absent.
type RopeScaling struct {
	// Type is rope_type, else the older type ("llama3", "yarn", "linear"); empty when the
	// model rotates by the default rule.
	Type                          string
	Factor                        json.Number
	LowFreqFactor, HighFreqFactor json.Number
	// OriginalMaxPositions is original_max_position_embeddings (the scaling's, else the
	// config's own, as Phi-4-mini writes it); 0 when absent.
	OriginalMaxPositions int64
	// ShortFactors and LongFactors are LongRoPE's per-frequency factors (Phi-4-mini: 48
	// each, one per rotated dimension pair), as written; nil for other scalings.
	ShortFactors, LongFactors []json.Number
}

// span is the range a fractional config number may take, and how an error says it.
type span struct {
	holds func(float64) bool
	text  string
}

// The ranges are generous, so no released model is refused; they exist so that a
// mistyped or hostile config.json is refused by key instead of reaching a params file.
var (
	// released models use 10,000 (Phi-4) to 5,000,000 (SmolLM3), long-context ones 10^7
	thetaSpan = span{func(f float64) bool { return f > 0 && f <= 1e12 }, "(0, 1e12]"}
	// released models use 1e-6 or 1e-5: a negative eps has no square root, and one of 1
	// or more swamps the mean square of the activations it normalizes
	epsSpan = span{func(f float64) bool { return f >= 0 && f < 1 }, "[0, 1)"}
	// released scalings use factors up to a few dozen (Llama 3: 32; Llama 4: 16)
	ropeFactorSpan = span{func(f float64) bool { return f > 0 && f <= 4096 }, "(0, 4096]"}
)

// maxPositions bounds max_position_embeddings and the scaling's original length.
const maxPositions = 1 << 27

// maxConvKernel bounds LFM2's conv_L_cache: every release uses 3, and a kernel as long as a
// head is already nonsense for a short convolution.
const maxConvKernel = 1024

// features decodes and checks Features; the first impossible value is the error.
func (c *Config) features() (Features, error) {
	d := &decoder{c: c}
	f := Features{
		ModelType:     d.text("model_type"),
		HiddenAct:     d.text("hidden_act"),
		NormEps:       d.firstNumber(epsSpan, "rms_norm_eps", "norm_eps"),
		AttentionBias: d.flag("attention_bias"),
		MLPBias:       d.flag("mlp_bias"),
		ConvBias:      d.flag("conv_bias"),
		ConvLCache:    d.whole("conv_L_cache", maxConvKernel),
		SlidingWindow: d.flag("use_sliding_window"),
		Rope:          d.ropeScaling(),
		RopeTheta:     d.ropeTheta(),
		Experts:       c.experts(),
		PartialRotary: d.partialRotary(),
		QGate:         d.flag("attn_output_gate"),
		NoRopeLayers:  d.noRopeLayers(),
	}
	f.MaxPositions, _ = c.Int("max_position_embeddings") // bounded by archBounds
	_, f.Vision = c.Top["vision_config"]
	if q, ok := c.Top["quantization_config"].(map[string]any); ok {
		f.Quantized = true
		f.QuantMethod, _ = q["quant_method"].(string)
	}
	return f, d.err
}

// decoder reads the text config's values, keeping the first refusal: later reads return
// zero values once err is set.
type decoder struct {
	c   *Config
	err error
}

func (d *decoder) fail(key, format string, args ...any) {
	if d.err == nil {
		d.err = d.c.errorf(key, format, args...)
	}
}

// text reads a string from the text config, else from the top level (a wrapper's
// model_type); null and absent are "".
func (d *decoder) text(key string) string {
	v, errorf := d.c.Text[key], d.c.errorf
	if v == nil {
		v, errorf = d.c.Top[key], d.c.topErrorf
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	if d.err == nil {
		d.err = errorf(key, "is %s, not a name", describe(v))
	}
	return ""
}

// flag reads a boolean; null and absent are false.
func (d *decoder) flag(key string) bool {
	switch v := d.c.Text[key].(type) {
	case nil:
		return false
	case bool:
		return v
	default:
		d.fail(key, "is %s, not true or false", describe(v))
		return false
	}
}

// whole reads a whole number in 1..max; null and absent are 0.
func (d *decoder) whole(key string, max int64) int64 {
	v := d.c.Text[key]
	if v == nil {
		return 0
	}
	n, ok := asInt(v)
	if !ok || n < 1 || n > max {
		d.fail(key, "is %s, not a whole number in 1..%d", describe(v), max)
		return 0
	}
	return n
}

// firstNumber reads the first of keys that is present and not null.
func (d *decoder) firstNumber(s span, keys ...string) json.Number {
	for _, k := range keys {
		if v := d.c.Text[k]; v != nil {
			return d.number(k, v, s)
		}
	}
	return ""
}

// number checks that v, the value of key, is a number in s, and returns it as written.
func (d *decoder) number(key string, v any, s span) json.Number {
	var n json.Number
	switch x := v.(type) {
	case json.Number:
		n = x
	case float64: // a Config built in code rather than decoded
		n = json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	default:
		d.fail(key, "is %s, not a number", describe(v))
		return ""
	}
	if f, err := n.Float64(); err != nil || !s.holds(f) {
		d.fail(key, "is %s, not a number in %s", n, s.text)
		return ""
	}
	return n
}

// ropeTheta reads rope_theta, else transformers v5's rope_parameters.rope_theta.
func (d *decoder) ropeTheta() json.Number {
	if v := d.c.Text["rope_theta"]; v != nil {
		return d.number("rope_theta", v, thetaSpan)
	}
	if rp, ok := d.c.Text["rope_parameters"].(map[string]any); ok && rp["rope_theta"] != nil {
		return d.number("rope_parameters.rope_theta", rp["rope_theta"], thetaSpan)
	}
	return ""
}

// ropeScaling reads rope_scaling, else transformers v5's rope_parameters, skipping one
// that names the default rotation (or no type at all).
func (d *decoder) ropeScaling() RopeScaling {
	for _, key := range []string{"rope_scaling", "rope_parameters"} {
		v := d.c.Text[key]
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			d.fail(key, "is %s, not an object", describe(v))
			return RopeScaling{}
		}
		t := d.ropeType(key, m, "rope_type")
		if t == "" {
			t = d.ropeType(key, m, "type")
		}
		if t == "" || t == "default" {
			continue
		}
		return d.scalingNumbers(key, m, t)
	}
	return RopeScaling{}
}

func (d *decoder) ropeType(key string, m map[string]any, field string) string {
	switch v := m[field].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		d.fail(key+"."+field, "is %s, not a RoPE type name", describe(v))
		return ""
	}
}

// scalingNumbers reads the numbers of the scaling object under key.
func (d *decoder) scalingNumbers(key string, m map[string]any, typ string) RopeScaling {
	r := RopeScaling{Type: typ}
	factor := func(field string) json.Number {
		if v := m[field]; v != nil {
			return d.number(key+"."+field, v, ropeFactorSpan)
		}
		return ""
	}
	r.Factor = factor("factor")
	r.LowFreqFactor = factor("low_freq_factor")
	r.HighFreqFactor = factor("high_freq_factor")
	r.ShortFactors = d.factorList(key, m, "short_factor")
	r.LongFactors = d.factorList(key, m, "long_factor")
	orig := m["original_max_position_embeddings"]
	if orig == nil {
		orig = d.c.Text["original_max_position_embeddings"]
	}
	if v := orig; v != nil {
		n, ok := asInt(v)
		if !ok || n < 1 || n > maxPositions {
			d.fail(key+".original_max_position_embeddings", "is %s, not a whole number in 1..%d", describe(v), maxPositions)
		}
		r.OriginalMaxPositions = n
	}
	return r
}

// maxRopeFactors bounds a LongRoPE factor list: one factor per rotated pair, so at most half
// the largest head_dim archBounds allow.
const maxRopeFactors = 512

// factorList reads a list of RoPE factors (LongRoPE's short_factor and long_factor) under
// key; nil when absent.
func (d *decoder) factorList(key string, m map[string]any, field string) []json.Number {
	v := m[field]
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok || len(l) > maxRopeFactors {
		d.fail(key+"."+field, "is %s, not a list of at most %d factors", describe(v), maxRopeFactors)
		return nil
	}
	out := make([]json.Number, 0, len(l))
	for _, x := range l {
		out = append(out, d.number(key+"."+field, x, ropeFactorSpan))
	}
	return out
}

// rotarySpan is the range of partial_rotary_factor: a share of head_dim.
var rotarySpan = span{func(f float64) bool { return f > 0 && f <= 1 }, "(0, 1]"}

// partialRotary reads partial_rotary_factor, else transformers v5's
// rope_parameters.partial_rotary_factor (Qwen3.5 writes it there).
func (d *decoder) partialRotary() json.Number {
	if v := d.c.Text["partial_rotary_factor"]; v != nil {
		return d.number("partial_rotary_factor", v, rotarySpan)
	}
	if rp, ok := d.c.Text["rope_parameters"].(map[string]any); ok && rp["partial_rotary_factor"] != nil {
		return d.number("rope_parameters.partial_rotary_factor", rp["partial_rotary_factor"], rotarySpan)
	}
	return ""
}

// noRopeLayers reads SmolLM3's no_rope_layers: a list of 0 and 1.
func (d *decoder) noRopeLayers() []int64 {
	v := d.c.Text["no_rope_layers"]
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		d.fail("no_rope_layers", "is %s, not a list of 0 and 1", describe(v))
		return nil
	}
	out := make([]int64, 0, len(l))
	for _, x := range l {
		n, ok := asInt(x)
		if !ok || (n != 0 && n != 1) {
			d.fail("no_rope_layers", "lists %s, not 0 or 1", describe(x))
			return nil
		}
		out = append(out, n)
	}
	return out
}

// experts reports a mixture-of-experts key set to anything but 0 or false: a count of
// experts, or an expert's width. A value of another kind counts, so an odd config is
// refused as MoE rather than exported as dense.
func (c *Config) experts() bool {
	for _, k := range []string{"num_experts", "num_local_experts", "n_routed_experts", "moe_intermediate_size"} {
		switch x := c.Text[k].(type) {
		case nil:
		case bool:
			if x {
				return true
			}
		default:
			if n, ok := asInt(x); !ok || n != 0 {
				return true
			}
		}
	}
	return false
}
