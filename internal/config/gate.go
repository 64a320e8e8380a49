package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Gate is the decision gate's prompts (docs/research/checks.md): the rows a published file
// must answer like its fp32 source. They are data, not code, so that a change of prompts is
// a reviewed config change; scores compare only across the same prompts.
type Gate struct {
	// PromptFile holds the app's system prompt, primer and tool schema, which are not
	// public; empty means internal/gate's documented neutral default. A relative path is read
	// from the working folder.
	PromptFile string `yaml:"prompt_file"`
	// Trailer follows each search question; {subject} is replaced by the row's subject.
	Trailer string `yaml:"trailer"`
	// Search rows are questions an app model should look up rather than recall.
	Search []GateRow `yaml:"search"`
	// Quiet rows are questions it should answer without a tool call.
	Quiet []string `yaml:"quiet"`
	// FidelityText is a text file in the config folder (embedded with it) whose first
	// FidelityTokens tokens fp32 and every export read; at each position the export's
	// next-token distribution is compared with fp32's over fp32's FidelityTopK most probable
	// tokens and the rest (docs/research/quality.md).
	FidelityText   string `yaml:"fidelity_text"`
	FidelityTokens int    `yaml:"fidelity_tokens"`
	FidelityTopK   int    `yaml:"fidelity_top_k"`
	// MaxMeanKL grades the fidelity text too: a file whose mean KL against fp32 is above it
	// fails the gate. 0 (the default) records the figure without grading it, as the
	// reference's gate does; a stricter pipeline sets it.
	MaxMeanKL float64 `yaml:"max_mean_kl"`
	// FidelityDeepFrom is the first position counted as deep in the window: the fidelity
	// figures are given again over the positions from it on, where a KV cache holds that
	// many tokens and its error has had them to grow over (docs/research/int8-kv.md).
	FidelityDeepFrom int `yaml:"fidelity_deep_from"`
	// MaxDeepMeanKL grades the deep positions of a file whose KV cache is int8: above it the
	// file fails the gate (and its window falls back to fp32). 0 records without grading.
	MaxDeepMeanKL float64 `yaml:"max_deep_mean_kl"`
}

// Bounds of the fidelity settings: enough positions for a mean, few enough that every
// window holds them (the smallest context tier is 2048) and the x86 runner feeds them one
// token a call in minutes; a top-k that keeps gate.json small.
const (
	MinFidelityTokens = 16
	MaxFidelityTokens = 8192
	MaxFidelityTopK   = 256
)

// textFile is a plain file name in the config folder: no folder, a .txt extension.
var textFile = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\.txt$`)

// GateRow is one search row.
type GateRow struct {
	Question string `yaml:"question"`
	Subject  string `yaml:"subject"`
}

func (c *Config) validateGate(v *validator) {
	g := c.Gate
	v.check(strings.Contains(g.Trailer, "{subject}"), "gate.trailer", "must name the row's subject as {subject}")
	v.check(len(g.Search) > 0, "gate.search", "lists no search row")
	v.check(len(g.Quiet) >= 2, "gate.quiet", "needs at least 2 rows (one may differ from fp32), not %d", len(g.Quiet))
	seen := map[string]bool{}
	for i, r := range g.Search {
		p := fmt.Sprintf("gate.search.%d", i)
		v.check(strings.TrimSpace(r.Question) != "", p+".question", "is empty")
		v.check(strings.TrimSpace(r.Subject) != "", p+".subject", "is empty")
		v.check(!seen[r.Question], p+".question", "%q is listed twice", r.Question)
		seen[r.Question] = true
	}
	for i, q := range g.Quiet {
		p := fmt.Sprintf("gate.quiet.%d", i)
		v.check(strings.TrimSpace(q) != "", p, "is empty")
		v.check(!seen[q], p, "%q is listed twice", q)
		seen[q] = true
	}
	v.check(textFile.MatchString(g.FidelityText), "gate.fidelity_text", "%q is not the name of a .txt file in the config folder", g.FidelityText)
	v.check(g.FidelityTokens >= MinFidelityTokens && g.FidelityTokens <= MaxFidelityTokens, "gate.fidelity_tokens",
		"%d is outside %d to %d", g.FidelityTokens, MinFidelityTokens, MaxFidelityTokens)
	for _, w := range c.Export.ContextTiers {
		v.check(g.FidelityTokens <= w, "gate.fidelity_tokens", "%d is more than the %d-token window can hold", g.FidelityTokens, w)
	}
	v.check(g.FidelityTopK >= 1 && g.FidelityTopK <= MaxFidelityTopK, "gate.fidelity_top_k", "%d is outside 1 to %d", g.FidelityTopK, MaxFidelityTopK)
	v.check(g.MaxMeanKL >= 0, "gate.max_mean_kl", "%g is negative: give a limit in nats, or 0 to record the mean KL without grading it", g.MaxMeanKL)
	v.check(g.FidelityDeepFrom >= 1 && g.FidelityDeepFrom < g.FidelityTokens, "gate.fidelity_deep_from",
		"%d is outside 1 to %d: the deep positions are the fidelity text's last ones", g.FidelityDeepFrom, g.FidelityTokens-1)
	v.check(g.MaxDeepMeanKL >= 0, "gate.max_deep_mean_kl", "%g is negative: give a limit in nats, or 0 to record the deep mean KL without grading it", g.MaxDeepMeanKL)
}
