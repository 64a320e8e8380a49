package config

import (
	"fmt"
	"strings"
)

// Gate is the decision gate's prompts (docs/research/checks.md): the rows a published file
// must answer like its fp32 source. They are data, not code, so that a change of prompts is
// a reviewed config change; scores compare only across the same prompts.
type Gate struct {
	// PromptFile holds the app's system prompt, primer and tool schema, which are not
	// public; empty means pkg/gate's documented neutral default. A relative path is read
	// from the working folder.
	PromptFile string `yaml:"prompt_file"`
	// Trailer follows each search question; {subject} is replaced by the row's subject.
	Trailer string `yaml:"trailer"`
	// Search rows are questions an app model should look up rather than recall.
	Search []GateRow `yaml:"search"`
	// Quiet rows are questions it should answer without a tool call.
	Quiet []string `yaml:"quiet"`
}

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
}
