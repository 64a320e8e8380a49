package publish

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/smoke"
	"github.com/experimentalmachines/exe-expo/internal/speed"
)

// measured is a speed block as `exe-expo speed` writes it on an ARM runner.
func measured(slow bool) *speed.Result {
	r := &speed.Result{Host: speed.Host{Arch: "arm64", CPUModel: "Neoverse-N2", NProc: 8, Runner: "arm-8", Note: speed.HostNote},
		RSSAfterLoadBytes: 412e6, Runs: []speed.Run{
			{Name: "512-token", PromptTokens: 512, GeneratedTokens: 64, PrefillTokPerSec: 310.5, DecodeTokPerSec: 41.2, FirstTokenSeconds: 1.65},
			{Name: "2304-token (one 2048-token chunk and 256)", PromptTokens: 2304, GeneratedTokens: 64, PrefillTokPerSec: 250, DecodeTokPerSec: 38, FirstTokenSeconds: 9.2}}}
	if slow {
		r.Structure = speed.Structure{OneTokenPerCall: true, Why: "forward's token input is fixed at 1"}
	}
	speed.Judge(r)
	return r
}

// TestSpeedOnCard: the card's speed table names the host as the export host, not a phone,
// gives every prompt's figures, and flags a slow path; a file never measured has no row,
// and a card without any measured file has no speed section.
func TestSpeedOnCard(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	assert.NotContains(t, Card(rs), "## Speed")

	rs[0].Report.Speed, rs[1].Report.Speed = measured(false), measured(true)
	card := Card(rs)
	require.Contains(t, card, "## Speed\n\n")
	section := card[strings.Index(card, "## Speed"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	assert.Contains(t, section, "on the export host, not a phone: arm64, 8 CPUs (Neoverse-N2), runner arm-8.")
	assert.Contains(t, section, "| `"+rs[0].Report.Files[0].Path+"` | fp32 | 512-token (512 tokens) | 310.5 tokens/s | 41.2 tokens/s | 1.65 s | 412 MB |")
	assert.Equal(t, 4, strings.Count(section, " MB |\n"), "two prompts of two files")
	assert.Contains(t, section, "- **Slow path** `"+rs[1].Report.Files[0].Path+"`: the file prefills one token a call: forward's token input is fixed at 1.")
	assert.NotContains(t, section, rs[2].Report.Files[0].Path)
}

// TestSpeedInConfig: config.json carries each measured variant's speed with the host label
// and its findings; a variant never measured has none.
func TestSpeedInConfig(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	rs[0].Report.Speed = measured(true)
	b, err := buildConfig(rs[:5])
	require.NoError(t, err)
	var c BackendConfig
	require.NoError(t, json.Unmarshal(b, &c))
	s := c.Variants[0].Speed
	require.NotNil(t, s)
	assert.Equal(t, "the export host, not a phone: arm64, 8 CPUs (Neoverse-N2), runner arm-8", s.MeasuredOn)
	assert.Len(t, s.Runs, 2)
	assert.Equal(t, int64(412e6), s.RSSAfterLoadBytes)
	assert.Equal(t, []string{"the file prefills one token a call: forward's token input is fixed at 1"}, s.SlowPath)
	assert.Nil(t, c.Variants[1].Speed)
	assert.NotContains(t, string(b[strings.Index(string(b), `"context": 4096`):]), `"speed"`)
}

// TestSmokeVerdictNamesThePrompt: the smoke column says whether the chat template rendered
// the prompt, as the app prompts, or a completion prompt stood in.
func TestSmokeVerdictNamesThePrompt(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	r := rs[0].Report
	r.Smoke = &smoke.Result{Passed: true, Answered: true, Prompt: "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"}
	assert.Equal(t, `passed ("Paris") with the chat template`, verdict(r, 0))
	r.Smoke.TemplateError = "ValueError: no source folder to read a chat template from"
	assert.Equal(t, `passed ("Paris") with a completion prompt (the chat template did not render)`, verdict(r, 0))
}
