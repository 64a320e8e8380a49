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
)

// Config is a decoded config.json. Top is the whole file; Text is `text_config` when the
// file nests one (multimodal wrappers), else Top. File names the file in every error.
type Config struct {
	Top  map[string]any
	Text map[string]any
	File string
	// nested is true when Text is text_config, so errors name "text_config.<key>".
	nested bool
}

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
	if err := c.check(); err != nil {
		return nil, err
	}
	c.normalize()
	return c, nil
}

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

// Architectures lists config.json's `architectures` (top level).
func (c *Config) Architectures() []string {
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
