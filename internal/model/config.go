// Package model turns a Hugging Face model repository (config.json and safetensors headers)
// into the architecture numbers that eligibility and sizing need. It reads through Files, so
// a local folder, the embedded snapshot and the Hub all go through the same code.
package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"
)

// Config is a decoded config.json. Top is the whole file; Text is `text_config` when the
// file nests one (multimodal wrappers), else Top. File names the file in every error.
//
// A Config is decoded once, when ParseConfig reads it: the Features, the Arch and the
// family it names are held here, and every reader (eligibility, the recipes, sizing,
// export) takes them from Features, Arch and Family instead of reading the maps again, so
// a command decodes each model it opens exactly once. Edit is the one way to change the
// maps afterwards, because it decodes them again.
type Config struct {
	Top  map[string]any
	Text map[string]any
	File string
	// nested is true when Text is text_config, so errors name "text_config.<key>".
	nested bool
	// dec is what decode read from Top and Text.
	dec decoded
}

// decoded is everything decode reads from a config, and the errors it met.
type decoded struct {
	// done is false for a Config that ParseConfig did not make (a literal), whose readers
	// get errNotDecoded rather than zero values that look like a model.
	done     bool
	features Features
	arch     Arch
	// featuresErr is the *ConfigError that refuses the config, which ParseConfig returns
	// and only an edited config can hold afterwards; archErr is featuresErr, or else the
	// size the config leaves to transformers' defaults.
	featuresErr, archErr error
	archs                []string
	family               string
}

// errNotDecoded is what a Config that ParseConfig did not make answers for its features.
var errNotDecoded = errors.New("config.json was not decoded: a Config comes from ParseConfig")

// decodes counts the calls of decode in this process; Decodes reads it.
var decodes atomic.Int64

// Decodes is how many times this process has decoded a config.json. It is a test hook:
// the tests of plan, export and the CLI hold each command to one decode per model it opens,
// which is what keeps every reader on the value decoded when the model was opened.
func Decodes() int64 { return decodes.Load() }

// ParseConfig decodes config.json; name labels errors. Numbers keep their exact values.
// A file that is not one JSON object, or whose architecture numbers no model can have
// (out of range, not whole, inconsistent), is refused with a *ConfigError naming the key.
func ParseConfig(name string, data []byte) (*Config, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, &ConfigError{File: name, Problem: err.Error()}
	}
	c := &Config{Top: top, Text: top, File: name}
	if tc, ok := top["text_config"].(map[string]any); ok {
		c.Text, c.nested = tc, true
	}
	c.decode()
	if err := c.dec.featuresErr; err != nil {
		return nil, err
	}
	return c, nil
}

// Edit changes the config's text keys (text_config's, for a wrapper) through change and
// decodes the config again, so that every reader sees the change. Only tests edit a parsed
// config, to spoil one key of a real one; a refusal the edit causes is what Features and
// Arch answer, as ParseConfig would have refused the file.
func (c *Config) Edit(change func(text map[string]any)) {
	change(c.Text)
	c.decode()
}

// decode is the one place a config is decoded: it checks the sizes and the Features (the
// first impossible value refuses the config), fills what old LFM2 configs express
// differently, and reads the Arch and the family. ParseConfig calls it when a model is
// opened, Edit when a test changes the maps.
func (c *Config) decode() {
	decodes.Add(1)
	d := decoded{done: true, archs: c.architectures()}
	d.family = FamilyOf(d.archs)
	if err := c.checkSizes(); err != nil {
		d.featuresErr = err
	} else {
		d.features, d.featuresErr = c.features()
	}
	if d.featuresErr != nil {
		d.archErr = d.featuresErr
	} else {
		c.normalize()
		d.arch, d.archErr = c.sizes(d.features)
	}
	c.dec = d
}

// Features are the config's switches and constants, decoded when it was parsed. The error
// is a *ConfigError only for a config edited since (Edit) into one ParseConfig refuses.
// Nothing here is ever missing in a way that refuses the model: a recipe that needs an
// absent value says so itself.
func (c *Config) Features() (Features, error) {
	if !c.dec.done {
		return Features{}, errNotDecoded
	}
	return c.dec.features, c.dec.featuresErr
}

// Arch is the architecture decoded when the config was parsed. A number no model can have
// is a *ConfigError (only in a config edited since); a missing one is an error naming the
// key, since a config may leave it to transformers' defaults (gemma-3-4b-it's text_config
// does) and the model is then refused sizing, not refused outright. That is why Features
// stands apart: a config without sizes still has to be refused for MoE or vision.
func (c *Config) Arch() (Arch, error) {
	if !c.dec.done {
		return Arch{}, errNotDecoded
	}
	return c.dec.arch, c.dec.archErr
}

// Family is the key of the family (internal/family) whose recipes build the model class the
// config's architectures name (FamilyOf), read when the config was decoded; "" when none.
func (c *Config) Family() string { return c.dec.family }

// decodeObject reads exactly one JSON object, saying in words what else the data holds.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Errorf("not a JSON object: invalid JSON at byte %d", syn.Offset)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errors.New("not a JSON object: the file is empty or ends early")
		}
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: it holds %s", describe(v))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not a JSON object: more data follows the object")
	}
	return obj, nil
}

// normalize fills what old LFM2 configs express differently: `full_attn_idxs` instead of
// `layer_types`, `block_ff_dim` instead of `intermediate_size`.
func (c *Config) normalize() {
	c.gemma3LayerTypes()
	if c.String("model_type") != "lfm2" {
		return
	}
	if _, ok := c.Text["layer_types"]; !ok {
		if idx, ok := c.Text["full_attn_idxs"].([]any); ok {
			n, _ := c.Int("num_hidden_layers")
			full := map[int64]bool{}
			for _, v := range idx {
				if i, ok := asInt(v); ok {
					full[i] = true
				}
			}
			types := make([]any, n)
			for i := range types {
				types[i] = "conv"
				if full[int64(i)] {
					types[i] = "full_attention"
				}
			}
			c.Text["layer_types"] = types
		}
	}
	if _, ok := c.Text["intermediate_size"]; !ok {
		if v, ok := c.Text["block_ff_dim"]; ok {
			c.Text["intermediate_size"] = v
		}
	}
}

// gemma3LayerTypes fills layer_types for a Gemma 3 config that gives only its sliding-window
// pattern (gemma-3-1b-it), as transformers' Gemma3TextConfig derives it: every layer slides
// but each pattern-th, which attends over the whole window.
func (c *Config) gemma3LayerTypes() {
	if c.String("model_type") != "gemma3_text" || c.Has("layer_types") || !c.Has("sliding_window") {
		return
	}
	pattern, ok := c.Int("sliding_window_pattern")
	if !ok {
		pattern, ok = c.Int("_sliding_window_pattern")
	}
	n, hasLayers := c.Int("num_hidden_layers")
	if !ok || !hasLayers {
		return
	}
	types := make([]any, n)
	for i := range types {
		types[i] = LayerSliding
		if (int64(i)+1)%pattern == 0 {
			types[i] = "full_attention"
		}
	}
	c.Text["layer_types"] = types
}

// LeftOut is the tensor-name prefixes the export leaves out of the checkpoint (a multimodal
// wrapper's vision tower, model.LeftOut); nil when it exports the whole checkpoint.
func (c *Config) LeftOut() []string { return LeftOut(c.Architectures()) }

// Has reports whether key is present and not null in the text config.
func (c *Config) Has(key string) bool {
	v, ok := c.Text[key]
	return ok && v != nil
}

// String returns a string field of the text config, or of the top level.
func (c *Config) String(key string) string {
	if s, ok := c.Text[key].(string); ok {
		return s
	}
	s, _ := c.Top[key].(string)
	return s
}

// Int returns an integer field of the text config.
func (c *Config) Int(key string) (int64, bool) { return asInt(c.Text[key]) }

// Float returns a numeric field of the text config.
func (c *Config) Float(key string) (float64, bool) {
	switch v := c.Text[key].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	}
	return 0, false
}

// Bool returns a boolean field; absent reports ok=false.
func (c *Config) Bool(key string) (val, ok bool) {
	v, ok := c.Text[key].(bool)
	return v, ok
}

// Map returns an object field (rope_scaling, rope_parameters), nil when absent or null.
func (c *Config) Map(key string) map[string]any {
	m, _ := c.Text[key].(map[string]any)
	return m
}

// Architectures lists config.json's `architectures` (top level), as decoded.
func (c *Config) Architectures() []string {
	if !c.dec.done {
		return c.architectures()
	}
	return slices.Clone(c.dec.archs)
}

// architectures reads config.json's `architectures` for decode.
func (c *Config) architectures() []string {
	var out []string
	if l, ok := c.Top["architectures"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// Strings returns a list-of-strings field (layer_types).
func (c *Config) Strings(key string) ([]string, bool) {
	l, ok := c.Text[key].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// IDs reads a token id field that may be an int or a list of ints (eos_token_id).
func IDs(v any) []int64 {
	if i, ok := asInt(v); ok {
		return []int64{i}
	}
	var out []int64
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if i, ok := asInt(x); ok {
				out = append(out, i)
			}
		}
	}
	return out
}
