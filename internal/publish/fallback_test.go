package publish

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestFallbackOnCardAndConfig: a window published in fp32 because its quantized file was
// refused says so under the card's files table and in its config.json variant; a folder
// without one says nothing of it.
func TestFallbackOnCardAndConfig(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	fb := &report.Fallback{Replaces: "xnnpack/SmolLM2-360M-Instruct-8da4w-gptq-4k.pte", QMode: "8da4w-gptq",
		Reason: "decision gate failed: the export's mean probability of fp32's token is 0.22 against fp32's 0.58."}
	rs[1].Report.Fallback = fb // xnnpack 4k
	card := Card(rs)
	assert.Contains(t, card, "Windows published in fp32 instead of their quantized file:\n\n"+
		"- XNNPACK (CPU) at 4,096 tokens is fp32 (`xnnpack/SmolLM2-360M-Instruct-fp32-4k.pte`): its 8da4w-gptq file `SmolLM2-360M-Instruct-8da4w-gptq-4k.pte` failed the checks before publishing "+
		"(decision gate failed: the export's mean probability of fp32's token is 0.22 against fp32's 0.58), so the unquantized file is published in its place.\n")
	assert.NotContains(t, Card(seedModels["SmolLM2-360M-Instruct"].reports()), "instead of their quantized file")

	var xnn struct {
		Variants []map[string]json.RawMessage `json:"variants"`
	}
	b, err := buildConfig(rs[:5])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &xnn))
	assert.JSONEq(t, `{"replaces": "xnnpack/SmolLM2-360M-Instruct-8da4w-gptq-4k.pte", "qmode": "8da4w-gptq",
		"reason": "decision gate failed: the export's mean probability of fp32's token is 0.22 against fp32's 0.58."}`, string(xnn.Variants[1]["fallback"]))
	_, has := xnn.Variants[0]["fallback"]
	assert.False(t, has, "a window built with the recipe's quantization has no fallback")
}
