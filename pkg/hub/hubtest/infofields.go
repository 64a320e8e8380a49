package hubtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Keys of the model info's config, as huggingface.co builds it: a summary of config.json
// (the keys huggingface.js types in ModelData.config, tasks/src/model-data.ts) with
// tokenizer_config.json's special tokens and chat template under tokenizer_config
// (tasks/src/tokenizer-data.ts), never the whole file: huggingface_hub issue 1759 shows
// {"architectures": […], "model_type": "mistral"} for a whole Mistral config.json
// (docs/research/hub.md#config-in-model-info).
var (
	summaryConfigKeys    = []string{"architectures", "auto_map", "model_type", "quantization_config"}
	summaryTokenizerKeys = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
		"mask_token", "chat_template", "use_default_system_prompt"}
)

// infoConfig is the model info's config of a commit: the Hub's summary, or config.json
// whole (as written) for a repo seeded with WholeConfigInInfo; nil when there is nothing
// to say.
func infoConfig(rp *repo, cm *commit) any {
	raw := readJSONFile(cm, "config.json")
	if rp.WholeConfig {
		if raw == nil {
			return nil
		}
		return raw
	}
	out := map[string]any{}
	pick(out, raw, summaryConfigKeys)
	tok := map[string]any{}
	pick(tok, readJSONFile(cm, "tokenizer_config.json"), summaryTokenizerKeys)
	if len(tok) > 0 {
		out["tokenizer_config"] = tok
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// pick copies keys of the JSON object raw (when it is one) into out.
func pick(out map[string]any, raw json.RawMessage, keys []string) {
	var m map[string]json.RawMessage
	if raw == nil || json.Unmarshal(raw, &m) != nil {
		return
	}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
}

// readJSONFile is a small JSON file of the commit as written, or nil when it is missing,
// large or not JSON.
func readJSONFile(cm *commit, name string) json.RawMessage {
	e, ok := cm.Files[name]
	if !ok || e.Size > 16<<20 {
		return nil
	}
	b, err := os.ReadFile(e.Blob)
	if err != nil || !json.Valid(b) {
		return nil
	}
	return b
}

// cardData parses the YAML front matter of README.md.
func cardData(cm *commit) map[string]any {
	e, ok := cm.Files["README.md"]
	if !ok || e.Size > 16<<20 {
		return nil
	}
	b, err := os.ReadFile(e.Blob)
	if err != nil {
		return nil
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil
	}
	front, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil
	}
	var m map[string]any
	if yaml.Unmarshal([]byte(front), &m) != nil {
		return nil
	}
	return m
}

// safetensorsTotals sums parameters per dtype over the safetensors files of the commit, as
// the Hub's "safetensors" property does.
func safetensorsTotals(cm *commit) map[string]any {
	params := map[string]int64{}
	found := false
	for p, e := range cm.Files {
		if !strings.HasSuffix(p, ".safetensors") {
			continue
		}
		counts, err := headerCounts(e.Blob)
		if err != nil {
			continue
		}
		found = true
		for k, v := range counts {
			params[k] += v
		}
	}
	if !found {
		return nil
	}
	var total int64
	for _, v := range params {
		total += v
	}
	return map[string]any{"parameters": params, "total": total}
}

func headerCounts(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var n uint64
	if err := binary.Read(f, binary.LittleEndian, &n); err != nil || n > 25_000_000 {
		return nil, fmt.Errorf("bad safetensors header in %s", path)
	}
	var hdr map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(f, int64(n))).Decode(&hdr); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for k, v := range hdr {
		if k == "__metadata__" {
			continue
		}
		var t struct {
			DType string  `json:"dtype"`
			Shape []int64 `json:"shape"`
		}
		if json.Unmarshal(v, &t) != nil {
			continue
		}
		c := int64(1)
		for _, d := range t.Shape {
			c *= d
		}
		out[t.DType] += c
	}
	return out, nil
}
