package publish

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// gated is a gate result with fidelity figures, as `exe-expo gate` writes it.
func gated() gate.Result {
	return gate.Result{Kind: "gate", Passed: true, Graded: 11, Agreed: 11, FP32Mean: 0.912, ExportMean: 0.874, Shortfall: 0.038,
		QuietRows: 4, QuietRowsAnsweredLikeFP32: 4,
		Fidelity: &gate.Fidelity{Text: gate.TextID{File: "fidelity-text.txt", SHA256: "0123456789abcdef0123"}, Positions: 128, TopK: 32,
			Agreed: 121, NextTokenAgreement: 121.0 / 128, MeanKL: 0.0421, MaxKL: 0.9}}
}

// TestQualityColumn: the card's files table has a quality column: the figures of a gated
// file (from its quality block, or from the gate result of a report written before the
// block), "not measured" for an XNNPACK file never gated, and for the backends the x86
// runner cannot run the words saying so; a note under the table explains the figures.
func TestQualityColumn(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	res := gated()
	q := res.Quality()
	rs[0].Report.Gate, rs[0].Report.Quality = &res, &q // xnnpack 2k: gated with the quality block
	legacy := res
	legacy.Fidelity, legacy.FidelityMissing = nil, gate.NoFidelityReference
	rs[1].Report.Gate = &legacy // xnnpack 4k: a gate result without the block or fidelity figures
	card := Card(rs)

	row := func(file string) string {
		for _, l := range strings.Split(card, "\n") {
			if strings.Contains(l, "[`"+file+"`]") {
				return l
			}
		}
		t.Fatalf("no row for %s in\n%s", file, card)
		return ""
	}
	assert.Contains(t, card, "| Backend | Target | File | Window | Size | Smoke test | Quality vs fp32 |\n|---|---|---|---|---|---|---|\n")
	assert.True(t, strings.HasSuffix(row("xnnpack/SmolLM2-360M-Instruct-fp32-2k.pte"), `| passed ("Paris") | next token 94.5%, KL 0.042; gate 0.87 (fp32 0.91) |`))
	assert.True(t, strings.HasSuffix(row("xnnpack/SmolLM2-360M-Instruct-fp32-4k.pte"), `| passed ("Paris") | gate 0.87 (fp32 0.91) |`))
	assert.True(t, strings.HasSuffix(row("xnnpack/SmolLM2-360M-Instruct-fp32-8k.pte"), `| passed ("Paris") | not measured |`))
	assert.True(t, strings.HasSuffix(row("vulkan/SmolLM2-360M-Instruct-vulkan-8da4w-2k.pte"), "| not measured here: Vulkan (GPU) needs a phone |"))
	assert.True(t, strings.HasSuffix(row("mtk/mt6991/SmolLM2-360M-Instruct-neuropilot-a16w8-2k-chunk1of4.pte"), "| not measured here: MediaTek NeuroPilot (APU) needs a phone |"))
	assert.Contains(t, card, "Quality against the fp32 source: *next token* is the share of the 128 positions of a fixed English text (`fidelity-text.txt`, sha256 `0123456789ab`)")
	assert.Contains(t, card, "over fp32's 32 most likely tokens and the rest (a lower bound of the full KL)")

	assert.NotContains(t, Card(seedModels["SmolLM2-360M-Instruct"].reports()), "Quality against the fp32 source",
		"no note when no file in the table has figures")
}

// TestQualityInConfig: each config.json variant carries its quality, null with a note where
// none was measured.
func TestQualityInConfig(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	res := gated()
	q := res.Quality()
	rs[0].Report.Quality = &q
	legacy := res
	legacy.Fidelity = nil
	rs[1].Report.Gate = &legacy

	var xnn struct {
		Variants []map[string]json.RawMessage `json:"variants"`
	}
	b, err := buildConfig(rs[:5])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &xnn))
	require.Len(t, xnn.Variants, 5)
	assert.JSONEq(t, `{"gate_passed": true, "gate_graded": 11, "gate_export_mean": 0.874, "gate_fp32_mean": 0.912,
		"next_token_agreement": 0.9453125, "mean_kl": 0.0421, "fidelity_positions": 128}`, string(xnn.Variants[0]["quality"]))
	assert.JSONEq(t, `{"gate_passed": true, "gate_graded": 11, "gate_export_mean": 0.874, "gate_fp32_mean": 0.912,
		"next_token_agreement": null, "mean_kl": null}`, string(xnn.Variants[1]["quality"]))
	assert.Equal(t, "null", string(xnn.Variants[2]["quality"]))
	assert.JSONEq(t, `"not measured: the file was not run on the decision gate"`, string(xnn.Variants[2]["quality_note"]))
	assert.NotContains(t, xnn.Variants[0], "quality_note")

	var vulkan struct {
		Variants []Variant `json:"variants"`
	}
	b, err = buildConfig(rs[5:10])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &vulkan))
	for _, v := range vulkan.Variants {
		assert.Nil(t, v.Quality)
		assert.Equal(t, "not measured here: Vulkan (GPU) needs a phone", v.QualityNote)
	}
}
