package gate

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// neutralPrompt is the default when config names no prompt file: the app's own system
// prompt, primer and tool schema are not public, so the committed gate runs on a neutral
// stand-in of the same shape (one web_search tool, a four-turn primer). Its scores compare
// only with scores made on it.
//
//go:embed neutral-prompt.json
var neutralPrompt []byte

// NeutralPromptName is how the report names the default prompt file.
const NeutralPromptName = "neutral (internal/gate/neutral-prompt.json)"

// Prompt is what every gate row is rendered under, as the app renders its conversations.
type Prompt struct {
	System string `json:"system"`
	Primer []Turn `json:"primer"`
	// Tools are the chat template's tool definitions (JSON schema functions).
	Tools []map[string]any `json:"tools"`
}

// Turn is one message of the primer.
type Turn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// PromptID names a prompt file and its content's hash.
type PromptID struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

func (p PromptID) String() string { return fmt.Sprintf("%s (sha256 %s)", p.File, p.SHA256) }

// LoadPrompt reads the prompt file config names; "" is the neutral default.
func LoadPrompt(path string) (Prompt, PromptID, error) {
	data, name := neutralPrompt, NeutralPromptName
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Prompt{}, PromptID{}, fileutil.Error("read the gate's prompt file", path, err)
		}
		data, name = b, path
	}
	sum := sha256.Sum256(data)
	id := PromptID{File: name, SHA256: hex.EncodeToString(sum[:])}
	var p Prompt
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Prompt{}, PromptID{}, fmt.Errorf("the gate's prompt file %s is not a prompt (system, primer, tools): %s", name, fileutil.Reason(err))
	}
	for i, t := range p.Primer {
		if t.Role != "user" && t.Role != "assistant" {
			return Prompt{}, PromptID{}, fmt.Errorf("the gate's prompt file %s: primer turn %d has role %q, not user or assistant", name, i+1, t.Role)
		}
	}
	return p, id, nil
}

// Rows is the gate's prompts as the drivers receive them: the user message of each row.
type Rows struct {
	Search []SearchRow `json:"search"`
	Quiet  []string    `json:"quiet"`
	// MaxMeanKL is gate.max_mean_kl: above it the fidelity text fails the file; 0 does not
	// grade it. The drivers never see it.
	MaxMeanKL float64 `json:"-"`
	// DeepFrom is gate.fidelity_deep_from and MaxDeepMeanKL gate.max_deep_mean_kl: the
	// deep positions' figures, graded for a file whose KV cache is int8.
	DeepFrom      int     `json:"-"`
	MaxDeepMeanKL float64 `json:"-"`
}

// SearchRow is a search question and the user message it becomes with the trailer.
type SearchRow struct {
	Question string `json:"question"`
	User     string `json:"user"`
}

// RowsFrom renders config's rows: each search question followed by the trailer naming
// its subject.
func RowsFrom(g config.Gate) Rows {
	r := Rows{Quiet: append([]string{}, g.Quiet...), MaxMeanKL: g.MaxMeanKL, DeepFrom: g.FidelityDeepFrom, MaxDeepMeanKL: g.MaxDeepMeanKL}
	for _, s := range g.Search {
		r.Search = append(r.Search, SearchRow{Question: s.Question,
			User: s.Question + " " + strings.ReplaceAll(g.Trailer, "{subject}", s.Subject)})
	}
	return r
}
