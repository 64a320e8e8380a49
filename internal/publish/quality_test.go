package publish

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
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

// qnnSimulated is a QNN window with the simulated figure a QNN export records: its QDQ
// program on the CPU against fp32 over the fidelity text.
func qnnSimulated(t *testing.T) placed {
	t.Helper()
	vk := seedModels["SmolLM2-360M-Instruct"].reports()[5] // vulkan 2k: a file the x86 runner cannot run
	require.Equal(t, "vulkan", vk.Report.Backend)
	r := *vk.Report
	r.Backend, r.Target, r.TargetName = "qnn", "SM8750", "Snapdragon 8 Elite"
	file := "qnn/sm8750/SmolLM2-360M-Instruct-qnn-hybrid-2k.pte"
	r.Files = []report.File{{Path: file, Bytes: 400_000_000}}
	q := gate.NotMeasuredHere("Qualcomm QNN (HTP)")
	q.Simulated = &gate.SimulatedFidelity{By: gate.QDQOnCPU, Fidelity: gate.Fidelity{
		Text: gate.TextID{File: "fidelity-text.txt", SHA256: "0123456789abcdef0123"}, Positions: 2048, TopK: 32,
		Agreed: 1907, NextTokenAgreement: 1907.0 / 2048, MeanKL: 0.0123, MaxKL: 0.4}}
	r.Quality = &q
	return placed{Path: file, Report: &r}
}

// TestSimulatedQuality: a QNN file's simulated figure reads as simulated everywhere it is
// shown: the card's quality column and its note, and config.json, where the variant's
// quality stays null (the file itself was not measured) and simulated_quality holds the
// figures with what they were measured on.
func TestSimulatedQuality(t *testing.T) {
	sim := qnnSimulated(t)
	const cell = "simulated on the CPU (QDQ program, not the HTP): next token 93.1% of 2,048, mean KL 0.012; not measured here: Qualcomm QNN (HTP) needs a phone"
	assert.Equal(t, cell, qualityCell(sim.Report))

	card := Card(append(seedModels["SmolLM2-360M-Instruct"].reports(), sim))
	assert.Contains(t, card, "[`qnn/sm8750/SmolLM2-360M-Instruct-qnn-hybrid-2k.pte`]")
	assert.Contains(t, card, "| "+cell+" |", "the QNN file's row in the card")
	assert.Contains(t, card, "A *simulated* figure", "the note under the table explains it")

	note := qualityNote([]placed{sim})
	assert.Contains(t, note, "*next token* is the share of the 2048 positions of a fixed English text (`fidelity-text.txt`, sha256 `0123456789ab`)")
	assert.Contains(t, note, "A *simulated* figure is the same measure taken on the quantized (QDQ) program the Qualcomm script saves before lowering, run on the CPU")
	assert.Contains(t, note, "not the HTP's fixed-point kernels")
	assert.Contains(t, note, "Each variant's `quality` (or `simulated_quality`) in `config.json`")
	assert.NotContains(t, note, "*gate*", "no file in the table was run on the decision gate")

	b, err := buildConfig([]placed{sim})
	require.NoError(t, err)
	var c struct {
		Variants []map[string]json.RawMessage `json:"variants"`
	}
	require.NoError(t, json.Unmarshal(b, &c))
	require.Len(t, c.Variants, 1)
	assert.Equal(t, "null", string(c.Variants[0]["quality"]), "the file itself was not measured")
	assert.JSONEq(t, `"`+cell+`"`, string(c.Variants[0]["quality_note"]))
	assert.JSONEq(t, `{"simulated": "QDQ program on the CPU (simulated quantization), not the HTP",
		"next_token_agreement": 0.93115234375, "mean_kl": 0.0123, "fidelity_positions": 2048}`, string(c.Variants[0]["simulated_quality"]))

	plain := *sim.Report
	q := *plain.Quality
	q.Simulated = nil
	plain.Quality = &q
	assert.Equal(t, "not measured here: Qualcomm QNN (HTP) needs a phone", qualityCell(&plain), "without a simulated figure the old words stay")
	assert.Nil(t, simulatedQuality(&plain))
	assert.Empty(t, qualityNote([]placed{{Path: sim.Path, Report: &plain}}))
}
