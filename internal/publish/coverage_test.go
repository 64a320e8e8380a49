package publish

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// TestCoverageColumn: a report whose structural check read the delegate coverage gets the
// card's "In the delegate" column and config.json's delegate_coverage, summed over the
// methods; a backend whose payload cannot be read counts only the linears on the CPU.
func TestCoverageColumn(t *testing.T) {
	n := func(v int) *int { return &v }
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	xnn := rs[0].Report
	xnn.StructuralCheck[0].Coverage = []pte.Coverage{{Method: "forward", OperatorsInside: n(101), OperatorsOutside: 59,
		LinearsInside: n(15), WeightBytesInside: 164, WeightBytesOutside: 836}}
	var mtk int
	for i, p := range rs {
		if p.Report.Backend == "mediatek" {
			mtk = i
			break
		}
	}
	for i := range rs[mtk].Report.StructuralCheck {
		rs[mtk].Report.StructuralCheck[i].Coverage = []pte.Coverage{{Method: "forward", OperatorsOutside: 3, WeightBytesInside: 100}}
	}
	card := Card(rs)
	assert.Contains(t, card, "| Smoke test | Quality vs fp32 | In the delegate |\n")
	row := func(file string) string {
		for _, l := range strings.Split(card, "\n") {
			if strings.Contains(l, "[`"+file+"`]") {
				return l
			}
		}
		t.Fatalf("no row for %s", file)
		return ""
	}
	assert.True(t, strings.HasSuffix(row("xnnpack/SmolLM2-360M-Instruct-fp32-2k.pte"), "| 15 of 15 linears, 16% of weights |"), row("xnnpack/SmolLM2-360M-Instruct-fp32-2k.pte"))
	assert.True(t, strings.HasSuffix(row("xnnpack/SmolLM2-360M-Instruct-fp32-4k.pte"), "| not read |"))
	assert.True(t, strings.HasSuffix(row("mtk/mt6991/SmolLM2-360M-Instruct-neuropilot-a16w8-2k-chunk1of4.pte"), "| no linear on the CPU, 100% of weights |"))
	assert.Contains(t, card, "In the delegate: the linears of the file that run inside its backend's delegate")

	data, err := buildConfig(rs[:1])
	require.NoError(t, err)
	var c BackendConfig
	require.NoError(t, json.Unmarshal(data, &c))
	require.NotNil(t, c.Variants[0].Coverage)
	v := c.Variants[0].Coverage
	assert.Equal(t, 15, *v.LinearsInside)
	assert.Equal(t, 0, v.LinearsOutside)
	assert.InDelta(t, 101.0/160, *v.OperatorShareInside, 1e-9)
	assert.InDelta(t, 0.164, *v.WeightShareInside, 1e-9)

	data, err = buildConfig([]placed{rs[mtk]})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &c))
	require.NotNil(t, c.Variants[0].Coverage, "the chunks' coverage is summed")
	assert.Nil(t, c.Variants[0].Coverage.LinearsInside, "NeuroPilot payloads do not say what runs inside")
}
