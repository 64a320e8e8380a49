package plan_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// measured is the largest resident figure the openweights app's team measured for one of
// its ExecuTorch files (8da4w, fp32 cache) on a phone, in bytes, and the file's size
// (docs/research/phone-measurements.md; the app's MiB read as bytes).
type measured struct {
	window   int
	resident int64
	pte      int64
}

// TestResidentAgainstThePhones holds plan's resident estimate to what the app measured on
// phones: within 10% of the largest figure measured for each file, from the fixture
// configs of LFM2.5-1.2B and Qwen3-1.7B. LFM2.5-2.6B has no stored config, so its rows
// hold the resident formula with the measured file and its 32,768 fp32 KV bytes per token.
// The phone classes say what the phones did: every file but Qwen3-1.7B at 32k ran on the
// 12 GB phones, and that one was killed there by the vendors' 6 GiB per-process limit.
func TestResidentAgainstThePhones(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.Export.XNNPACK.Int8KVFrom = 0 // the measured files keep an fp32 cache at every window
	for _, tc := range []struct {
		id   string
		rows []measured
	}{
		{"LiquidAI/LFM2.5-1.2B-Base", []measured{
			{2048, 1_243_611_136, 795_679_104}, {4096, 1_284_505_600, 797_776_256}, {8192, 1_397_751_808, 801_970_560},
			{16384, 1_602_224_128, 810_359_168}, {32768, 1_995_440_128, 827_137_024}}},
		{"Qwen/Qwen3-1.7B", []measured{{2048, 1_992_294_400, 1_284_898_432}, {32768, 9_019_850_752, 1_347_820_032}}},
	} {
		src, _, err := source.Open(context.Background(), tc.id, "main", nil)
		require.NoError(t, err)
		rows := plan.Build(cfg, src, "xnnpack").Backends[0].Rows
		for _, m := range tc.rows {
			i := slices.IndexFunc(rows, func(r plan.Row) bool { return r.Window == m.window })
			require.GreaterOrEqual(t, i, 0, "%s has no %d row", tc.id, m.window)
			r := rows[i]
			assert.InEpsilon(t, m.resident, r.ResidentBytes, 0.10, "%s %s: estimate %d, measured %d", tc.id, r.Label, r.ResidentBytes, m.resident)
			assert.GreaterOrEqual(t, r.ResidentBytes, m.resident, "%s %s: the estimate never promises a phone less than was measured", tc.id, r.Label)
			assert.InEpsilon(t, m.pte, r.PTEBytes, 0.02, "%s %s: the .pte estimate", tc.id, r.Label)
			held := slices.Contains(config.Fits(cfg.Export.PhoneClasses, r.ResidentBytes), 12)
			killed := tc.id == "Qwen/Qwen3-1.7B" && m.window == 32768
			assert.Equal(t, !killed, held, "%s %s on a 12 GB phone", tc.id, r.Label)
		}
	}
	for _, m := range []measured{
		{2048, 2_080_374_784, 1_783_435_008}, {4096, 2_328_887_296, 1_785_532_160}, {8192, 2_277_507_072, 1_789_726_464},
		{16384, 2_631_925_760, 1_798_115_072}, {32768, 3_274_702_848, 1_814_892_288},
	} {
		est := m.pte + 32_768*int64(m.window) + cfg.Export.RuntimeOverheadBytes
		assert.InEpsilon(t, m.resident, est, 0.10, "LFM2.5-2.6B %s: estimate %d, measured %d", family.WindowLabel(m.window), est, m.resident)
		assert.GreaterOrEqual(t, est, m.resident, "LFM2.5-2.6B %s: never below what was measured", family.WindowLabel(m.window))
		assert.Contains(t, config.Fits(cfg.Export.PhoneClasses, est), 12, "LFM2.5-2.6B %s on a 12 GB phone", family.WindowLabel(m.window))
	}
}
