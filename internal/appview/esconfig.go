package appview

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ESConfig is a folder's config.json as ExecuServe decodes it (its catalog's ExportConfig):
// the same fields with the same types, a pointer where ExecuServe's field may be null.
// ExecuServe's decoder ignores unknown keys (ignoreUnknownKeys), so unknown fields are
// allowed here too; but a known field of the wrong type, or null where ExecuServe's field
// cannot be null, fails the whole file, and ExecuServe then drops the folder
// (docs/research/execuserve-rules.md).
type ESConfig struct {
	Runtime        *string     `json:"runtime"`
	RuntimeVersion *string     `json:"runtime_version"`
	Backend        *string     `json:"backend"`
	Target         *string     `json:"target"`
	Tokenizer      *string     `json:"tokenizer"`
	SourceModel    *string     `json:"source_model"`
	Variants       []ESVariant `json:"variants"`
}

// ESVariant is one variant as ExecuServe decodes it (its ExportVariant).
type ESVariant struct {
	File *string `json:"file"`
	// SizeBytes is a Kotlin Long that cannot be null.
	SizeBytes int64 `json:"size_bytes"`
	// SHA256 is any JSON: ExecuServe takes a string for File, or an object of digests by
	// file name for a window cut into chunks.
	SHA256 json.RawMessage `json:"sha256"`
	// Context is a Kotlin Int (32 bits).
	Context         *int32                     `json:"context"`
	Quantization    *string                    `json:"quantization"`
	FitsPhoneBudget *bool                      `json:"fits_phone_budget"`
	Files           []string                   `json:"files"`
	Embedding       *string                    `json:"embedding"`
	Runner          map[string]json.RawMessage `json:"runner"`
}

// notNull are the fields ExecuServe declares without a question mark: a null there fails
// its decoder where Go's would leave the zero value.
var (
	configNotNull  = []string{"variants"}
	variantNotNull = []string{"size_bytes", "files"}
)

// ParseESConfig decodes b as ExecuServe does, and fails where ExecuServe's decoder fails.
func ParseESConfig(b []byte) (*ESConfig, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, fmt.Errorf("config.json is not a JSON object")
	}
	if err := nonNull(top, configNotNull, "config.json"); err != nil {
		return nil, err
	}
	var raw []map[string]json.RawMessage
	if v, ok := top["variants"]; ok {
		if err := json.Unmarshal(v, &raw); err != nil {
			return nil, fmt.Errorf("config.json: variants is not a list of objects")
		}
	}
	for i, v := range raw {
		if v == nil {
			return nil, fmt.Errorf("config.json: variants[%d] is null", i)
		}
		if err := nonNull(v, variantNotNull, fmt.Sprintf("config.json: variants[%d]", i)); err != nil {
			return nil, err
		}
	}
	var c ESConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return &c, nil
}

func nonNull(obj map[string]json.RawMessage, keys []string, where string) error {
	for _, k := range keys {
		if v, ok := obj[k]; ok && string(bytes.TrimSpace(v)) == "null" {
			return fmt.Errorf("%s: %s is null, and ExecuServe's field cannot be", where, k)
		}
	}
	return nil
}

// Digest is the digest ExecuServe reads for name from the variant, "" for none: the string
// for the variant's file, or the object's entry for a chunk.
func (v ESVariant) Digest(name string) string {
	var s string
	if json.Unmarshal(v.SHA256, &s) == nil {
		if v.File != nil && *v.File == name {
			return s
		}
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v.SHA256, &m) == nil {
		if json.Unmarshal(m[name], &s) == nil {
			return s
		}
	}
	return ""
}
