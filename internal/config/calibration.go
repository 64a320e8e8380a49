package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Calibration is the GPTQ solve's calibration rows (docs/research/calibration.md). The
// reference's texts are not public, so ours are data here in its shape: a change of rows
// is a reviewed config change, and Validate holds them apart from the gate's rows, since
// the gate must grade prompts the solve never saw.
type Calibration struct {
	// Search rows are rendered as the gate's are: the question, then gate.trailer naming
	// the subject, under the gate's prompt file.
	Search []GateRow `yaml:"search"`
	// Known questions are asked under the gate's prompt file without the trailer.
	Known []string `yaml:"known"`
	// General prompts are rendered in the plain chat template, with no system prompt.
	General []string `yaml:"general"`
	// AppReplyTokens and GeneralReplyTokens bound the fp32 model's greedy reply that
	// continues each row.
	AppReplyTokens     int `yaml:"app_reply_tokens"`
	GeneralReplyTokens int `yaml:"general_reply_tokens"`
	// PromptLimit is the most tokens a prompt may have, not counting the head every app
	// row shares (system prompt, primer, tools).
	PromptLimit int `yaml:"prompt_limit"`
}

func (c *Config) validateCalibration(v *validator) {
	k := c.Calibration
	v.check(len(k.Search) > 0, "calibration.search", "lists no search row")
	v.check(len(k.Known) > 0, "calibration.known", "lists no known question")
	v.check(len(k.General) > 0, "calibration.general", "lists no general prompt")
	v.check(k.AppReplyTokens > 0, "calibration.app_reply_tokens", "must be positive, not %d", k.AppReplyTokens)
	v.check(k.GeneralReplyTokens > 0, "calibration.general_reply_tokens", "must be positive, not %d", k.GeneralReplyTokens)
	v.check(k.PromptLimit > 0, "calibration.prompt_limit", "must be positive, not %d", k.PromptLimit)
	gateRows, subjects := c.gateTexts()
	seen := map[string]bool{}
	row := func(path, text string) {
		v.check(strings.TrimSpace(text) != "", path, "is empty")
		v.check(!seen[text], path, "%q is listed twice", text)
		seen[text] = true
		v.check(!gateRows[text], path, "%q is a gate row: the gate must grade prompts the solve never saw", text)
		s := namesSubject(text, subjects)
		v.check(s == "", path, "%q names the gate subject %s: the gate must grade prompts the solve never saw", text, s)
	}
	for i, r := range k.Search {
		p := fmt.Sprintf("calibration.search.%d", i)
		row(p+".question", r.Question)
		v.check(strings.TrimSpace(r.Subject) != "", p+".subject", "is empty")
		s := namesSubject(r.Subject, subjects)
		v.check(s == "", p+".subject", "%q shares the gate subject %s: the gate must grade prompts the solve never saw", r.Subject, s)
	}
	for i, q := range k.Known {
		row(fmt.Sprintf("calibration.known.%d", i), q)
	}
	for i, q := range k.General {
		row(fmt.Sprintf("calibration.general.%d", i), q)
	}
}

// subject is a gate subject and the pattern that finds it as a whole word, in any case.
type subject struct {
	name string
	word *regexp.Regexp
}

// gateTexts is every gate row's text, and the gate's subjects.
func (c *Config) gateTexts() (rows map[string]bool, subjects []subject) {
	rows = map[string]bool{}
	for _, r := range c.Gate.Search {
		rows[r.Question] = true
		if strings.TrimSpace(r.Subject) != "" {
			subjects = append(subjects, subject{r.Subject, regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(r.Subject) + `\b`)})
		}
	}
	for _, q := range c.Gate.Quiet {
		rows[q] = true
	}
	return rows, subjects
}

// namesSubject returns the first gate subject text names: a calibration row about Concord
// would teach the solve a gate answer.
func namesSubject(text string, subjects []subject) string {
	for _, s := range subjects {
		if s.word.MatchString(text) {
			return s.name
		}
	}
	return ""
}
