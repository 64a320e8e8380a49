package publish

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// TestPhoneTableOnCardAndConfig: the reports record each window's resident bytes and the
// classes it was held against; the card's table and config.json give, per folder, the
// largest window each class holds, and each variant the classes that hold it.
func TestPhoneTableOnCardAndConfig(t *testing.T) {
	classes := []config.PhoneClass{{RAMGiB: 4, AppBytes: 2_576_980_378}, {RAMGiB: 8, AppBytes: 5_153_960_755}, {RAMGiB: 16, AppBytes: 10_307_921_510}}
	mk := func(folder string, w int, resident int64) placed {
		r := &report.Report{Backend: "xnnpack", Target: anyTarget, Source: report.Source{ID: "org/M-1B", SHA: "abc", License: report.License{License: "apache-2.0"}},
			Toolchain: map[string]string{"executorch": "1.4.0"}, Recipe: map[string]any{"label": "8da4w"},
			Window: report.Window{Context: w, DeviceResident: resident, PhoneClasses: classes, FitsPhonesGiB: config.Fits(classes, resident)},
			Files:  []report.File{{Path: folder + "/m.pte", Bytes: 1, SHA256: "ab"}}}
		if folder == "vulkan" {
			r.Backend = "vulkan"
		}
		return placed{Path: folder + "/" + report.Name(fmtWindow(w)), Report: r}
	}
	xnn := []placed{mk("xnnpack", 2048, 2_000_000_000), mk("xnnpack", 8192, 4_000_000_000), mk("xnnpack", 32768, 9_000_000_000)}
	vk := []placed{mk("vulkan", 2048, 3_000_000_000)}

	card := Card(append(append([]placed(nil), xnn...), vk...))
	assert.Contains(t, card, "## Which phone runs which window\n\n")
	assert.Contains(t, card, "2.58 GB for a 4 GB phone, 5.15 GB for a 8 GB phone, 10.31 GB for a 16 GB phone")
	assert.Contains(t, card, "| files | 4 GB phone | 8 GB phone | 16 GB phone |\n| --- | --- | --- | --- |\n")
	assert.Contains(t, card, "| XNNPACK (CPU) (any arm64) | 2k | 8k | 32k |\n")
	assert.Contains(t, card, "| Vulkan (GPU) (any arm64) | — | 2k | 2k |\n")

	data, err := buildConfig(xnn)
	require.NoError(t, err)
	var c BackendConfig
	require.NoError(t, json.Unmarshal(data, &c))
	assert.Equal(t, []config.PhoneFit{{RAMGiB: 4, AppBytes: 2_576_980_378, Window: 2048}, {RAMGiB: 8, AppBytes: 5_153_960_755, Window: 8192}, {RAMGiB: 16, AppBytes: 10_307_921_510, Window: 32768}}, c.Phones)
	require.Len(t, c.Variants, 3)
	assert.Equal(t, []int{4, 8, 16}, c.Variants[0].FitsPhonesGiB)
	assert.Equal(t, []int{16}, c.Variants[2].FitsPhonesGiB)

	// reports from before the classes were recorded: no table, no field
	old := mk("xnnpack", 2048, 2_000_000_000)
	old.Report.Window.PhoneClasses, old.Report.Window.FitsPhonesGiB = nil, nil
	assert.NotContains(t, Card([]placed{old}), "Which phone")
	data, err = buildConfig([]placed{old})
	require.NoError(t, err)
	assert.NotContains(t, string(data), "phones")
}

func fmtWindow(w int) string {
	return map[int]string{2048: "2k", 8192: "8k", 32768: "32k"}[w]
}

// TestPhoneTableByCache: reports that record each window's resident bytes with either
// cache give the card a row per cache under the folder's own, and config.json and the
// catalog the table per cache; with one cache known, neither appears.
func TestPhoneTableByCache(t *testing.T) {
	classes := []config.PhoneClass{{RAMGiB: 4, AppBytes: 2_576_980_378}, {RAMGiB: 8, AppBytes: 5_153_960_755}, {RAMGiB: 16, AppBytes: 10_307_921_510}}
	mk := func(w int, cache string, fp32, int8 int64) placed {
		resident := map[string]int64{"fp32": fp32, "int8": int8}[cache]
		r := &report.Report{Backend: "xnnpack", Target: anyTarget, Source: report.Source{ID: "org/M-1B", SHA: "abc", License: report.License{License: "apache-2.0"}},
			Toolchain: map[string]string{"executorch": "1.5.1"}, Recipe: map[string]any{"label": "8da4w", "kv_cache_dtype": cache},
			Window: report.Window{Context: w, DeviceResident: resident, PhoneClasses: classes, FitsPhonesGiB: config.Fits(classes, resident),
				ResidentByCache: map[string]int64{"fp32": fp32, "int8": int8}},
			Files: []report.File{{Path: "xnnpack/m.pte", Bytes: 1, SHA256: "ab"}}}
		return placed{Path: "xnnpack/" + report.Name(fmtWindow(w)), Report: r}
	}
	// 2k keeps fp32; 8k and 32k int8, which the 4 and 8 GB classes hold where fp32 would not.
	rs := []placed{mk(2048, "fp32", 2_000_000_000, 1_600_000_000), mk(8192, "int8", 4_000_000_000, 2_500_000_000), mk(32768, "int8", 9_000_000_000, 5_000_000_000)}
	card := Card(rs)
	assert.Contains(t, card, "| XNNPACK (CPU) (any arm64) | 8k | 32k | 32k |\n"+
		"| XNNPACK (CPU) (any arm64), every window with an fp32 KV cache | 2k | 8k | 32k |\n"+
		"| XNNPACK (CPU) (any arm64), every window with an int8 KV cache | 8k | 32k | 32k |\n")

	data, err := buildConfig(rs)
	require.NoError(t, err)
	var c BackendConfig
	require.NoError(t, json.Unmarshal(data, &c))
	windows := func(fits []config.PhoneFit) []int {
		var out []int
		for _, f := range fits {
			out = append(out, f.Window)
		}
		return out
	}
	require.Contains(t, c.PhonesByCache, "fp32")
	require.Contains(t, c.PhonesByCache, "int8")
	assert.Equal(t, []int{2048, 8192, 32768}, windows(c.PhonesByCache["fp32"]))
	assert.Equal(t, []int{8192, 32768, 32768}, windows(c.PhonesByCache["int8"]))
	assert.Equal(t, []int{8192, 32768, 32768}, windows(c.Phones))
	assert.Equal(t, "int8", c.Variants[1].KVCache)

	// one cache known: no rows, no field
	for i := range rs {
		rs[i].Report.Window.ResidentByCache = nil
	}
	assert.NotContains(t, Card(rs), "every window with")
	data, err = buildConfig(rs)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "phones_by_kv_cache")
}
