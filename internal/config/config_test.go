package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readRepoConfig(t *testing.T) ([]byte, []byte) {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("..", "..", "config", PipelineFile))
	if err != nil {
		t.Fatal(err)
	}
	v, err := os.ReadFile(filepath.Join("..", "..", "config", VersionsFile))
	if err != nil {
		t.Fatal(err)
	}
	return y, v
}

func TestDefaultMatchesReference(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RepoFor("Qwen3-1.7B"); got != "experimentalmachines/Qwen3-1.7B-ExecuTorch" {
		t.Errorf("RepoFor = %q", got)
	}
	if got := c.Export.ContextTiers; len(got) != 5 || got[0] != 32768 || got[4] != 2048 {
		t.Errorf("context tiers = %v", got)
	}
	if c.Watch.MaxParams != 4_500_000_000 || c.Export.DeviceBudgetBytes != 5_000_000_000 {
		t.Errorf("caps = %d, %d", c.Watch.MaxParams, c.Export.DeviceBudgetBytes)
	}
	if c.Versions.ExecuTorch != "1.5.1" || len(c.Versions.NeuroPilotSDKSHA256) != 64 {
		t.Errorf("versions = %+v", c.Versions)
	}
	if got := c.RunnersFor(c.Export.XNNPACK.Runners); len(got) != 3 || got[0].Label != "blacksmith-8vcpu-ubuntu-2404-arm" {
		t.Errorf("xnnpack runners = %+v", got)
	}
	if c.Export.JobLimitMinutes != 350 {
		t.Errorf("job limit = %d minutes", c.Export.JobLimitMinutes)
	}
	if c.Chips["MT6991"].Platform != "DX4" || c.Chips["SM8750"].Name != "Snapdragon 8 Elite" {
		t.Errorf("chips = %+v", c.Chips)
	}
}

// TestStrictErrors edits the real file one line at a time and wants the error to name the
// file, the line and the key.
func TestStrictErrors(t *testing.T) {
	y, v := readRepoConfig(t)
	tests := []struct {
		name       string
		old, new   string
		wantSubstr []string
	}{
		{"misspelt key", "  repo_suffix: -ExecuTorch", "  repo_sufix: -ExecuTorch", []string{"config/pipeline.yaml: line 10: hub.repo_sufix: unknown key repo_sufix (misspelt, or in the wrong section?)"}},
		{"wrong type", "  limit_per_org: 1500 ", "  limit_per_org: many ", []string{"config/pipeline.yaml: line 22: watch.limit_per_org: want a whole number, not `many`"}},
		{"list for a number", "  limit_per_org: 1500 ", "  limit_per_org: [1, 2] ", []string{"line 22: watch.limit_per_org: want a whole number, not a list"}},
		{"text for a list", "  tags: [executorch, android, on-device, openweights]", "  tags: executorch", []string{"line 12: hub.tags: want a list, not `executorch`"}},
		{"text for a flag", "    embedding_hqq: false ", "    embedding_hqq: sometimes ", []string{"line 61: export.xnnpack.embedding_hqq: want true or false, not `sometimes`"}},
		{"text for a mapping", "  org_families:\n    Qwen: [qwen3, qwen25]\n    google: [gemma3]\n    meta-llama: [llama32]\n    HuggingFaceTB: [smollm2, smollm3]\n",
			"  org_families: all\n", []string{"line 17: watch.org_families: want a mapping, not `all`"}},
		{"text for a family list", "    Qwen: [qwen3, qwen25]", "    Qwen: qwen3", []string{"line 18: watch.org_families.Qwen: want a list, not `qwen3`"}},
		{"broken YAML", "hub:\n  # Output org", "hub: github\n  # Output org", []string{"config/pipeline.yaml: line 4: did not find expected key"}},
		{"text for a fraction", "  max_nominal_billions: 4.0 ", "  max_nominal_billions: four ", []string{"watch.max_nominal_billions: want a number, not `four`"}},
		{"impossible group size", "    group_size: 32\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", "    group_size: 24\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", []string{"pipeline.yaml", "line 59", "export.xnnpack.group_size", "power of two"}},
		{"schedule that is not a cron", `  schedule: ""`, `  schedule: "hourly"`, []string{"watch.schedule", `"hourly" is not a cron of five fields`}},
		{"unknown runner", "    runners: [arm-8, arm-16, arm-32]  # smallest first", "    runners: [arm-9]", []string{"line 71", "export.xnnpack.runners.0", "arm-9"}},
		{"unknown chip", "    socs: [MT6991]", "    socs: [MT6999]", []string{"export.mediatek.socs.0", "MT6999"}},
		{"qmode without size model", "    qmode: 8da4w\n    group_size: 32\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", "    qmode: int8\n    group_size: 32\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", []string{"line 58", "export.xnnpack.qmode", `"int8" has no size model (8da4w or fp32)`}},
		{"duplicate window", "context_tiers: [32768, 16384, 8192, 4096, 2048]", "context_tiers: [32768, 16384, 8192, 4096, 4096]", []string{"export.context_tiers.4", "twice"}},
		{"repository without owner", "  repository: experimentalmachines/exe-expo", "  repository: exe-expo", []string{"github.repository", `"exe-expo" is not a GitHub owner/name`}},
		{"ref with a space", "  caller_ref: v1", "  caller_ref: v 1", []string{"github.caller_ref", `"v 1" is not a branch, tag or commit name`}},
		{"no job limit", "  job_limit_minutes: 350\n", "", []string{"export.job_limit_minutes", "0 is outside 1..360 (GitHub cancels a job after 360 minutes)"}},
		{"job limit past GitHub's", "  job_limit_minutes: 350", "  job_limit_minutes: 361", []string{"line 110: export.job_limit_minutes: 361 is outside 1..360"}},
		{"job limit in hours", "  job_limit_minutes: 350", "  job_limit_minutes: 5h", []string{"line 110: export.job_limit_minutes: want a whole number, not `5h`"}},
		{"calibration window below the prefill", "    calib_window: 2048", "    calib_window: 64", []string{"export.qnn.calib_window", "64 is below prefill_ar_len 128"}},
		{"calibrate once without a calibration window", "    calib_window: 2048", "    calib_window: 0", []string{"export.qnn.calibrate_once", "needs export.qnn.calib_window"}},
		{"a borrowed fit with a figure of its own", "{backend: vulkan, like: xnnpack,", "{backend: vulkan, like: xnnpack, seconds: 5,", []string{"export_times.10.like", "gives no figure of its own"}},
		{"a borrowed fit from nothing measured", "{backend: vulkan, like: xnnpack,", "{backend: vulkan, like: enn,", []string{"export_times.10.like", `no export_times entry measures "enn"`}},
		{"a negative host scale", "seconds: 716, host_scale: 0.68,", "seconds: 716, host_scale: -0.68,", []string{"export_times.4.host_scale", "-0.68 cannot be negative"}},
		{"calibration share of the whole export", "    share: 0.4842", "    share: 1", []string{"calibration_times.qnn.share", "1 is not a share between 0 and 1"}},
		{"no calibration share", "    share: 0.4842", "    share: 0", []string{"calibration_times.qnn.share", "0 is not a share between 0 and 1"}},
		{"compile share of the whole rest", "    compile_share: 0.8198", "    compile_share: 1", []string{"calibration_times.qnn.compile_share", "1 is not a share between 0 and 1"}},
		{"shrinking calibration", "    growth: 1.97", "    growth: -1.97", []string{"calibration_times.qnn", "a growth exponent cannot be negative"}},
		{"calibration times without a source", "    source: \"seed README (SM8650 breakdown, SM8750 2k and 4k) and docs/research/qnn-calibration.md's probe\"", "    source: \"\"", []string{"calibration_times.qnn.source", "say where the figures come from"}},
		{"runners out of order", "    runners: [x64-8, x64-16, x64-32]\n  mediatek:", "    runners: [x64-32, x64-8]\n  mediatek:", []string{"export.qnn.runners.1", "smallest first"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited := strings.Replace(string(y), tc.old, tc.new, 1)
			require.NotEqual(t, string(y), edited, "test edit %q did not apply", tc.old)
			_, err := Parse("config/pipeline.yaml", []byte(edited), "config/versions.env", v)
			require.Error(t, err)
			for _, s := range tc.wantSubstr {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), "!!", "YAML tags")
			assert.NotContains(t, err.Error(), "unmarshal")
			assert.NotContains(t, err.Error(), "config.", "Go type names")
		})
	}
}

func TestVersionsErrors(t *testing.T) {
	y, v := readRepoConfig(t)
	tests := []struct{ name, old, new, want string }{
		{"unknown key", "PYTHON_VERSION=3.11", "PYTHON_VERSON=3.11", "versions.env:7: unknown key PYTHON_VERSON"},
		{"bad sha", "NEUROPILOT_SDK_SHA256=42155c3b", "NEUROPILOT_SDK_SHA256=XX155c3b", "NEUROPILOT_SDK_SHA256"},
		{"missing", "QAIRT_VERSION=2.37.0.250724\n", "", "QAIRT_VERSION is missing"},
		{"not kv", "PYTHON_VERSION=3.11", "PYTHON_VERSION 3.11", "is not KEY=VALUE"},
		{"short commit", "EXECUTORCH_COMMIT=3b60683923245cf472b7323426920e15623ba361", "EXECUTORCH_COMMIT=3b606839", "full 40-hex commit"},
		{"torch not a version", "TORCH_VERSION=2.14.0", "TORCH_VERSION=latest", `TORCH_VERSION="latest" is not a version such as 2.14.0`},
		{"torchao missing", "TORCHAO_VERSION=0.18.0\n", "", "TORCHAO_VERSION is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited := strings.Replace(string(v), tc.old, tc.new, 1)
			if edited == string(v) {
				t.Fatalf("test edit %q did not apply", tc.old)
			}
			_, err := Parse("config/pipeline.yaml", y, "config/versions.env", []byte(edited))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestLoadDirErrors: a missing file is named once, with the cause in words.
func TestLoadDirErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadDir(dir)
	require.Error(t, err)
	path := filepath.Join(dir, PipelineFile)
	assert.Equal(t, "read "+path+": no such file or directory", err.Error())
	assert.ErrorIs(t, err, fs.ErrNotExist)

	y, _ := readRepoConfig(t)
	require.NoError(t, os.WriteFile(path, y, 0o644))
	_, err = LoadDir(dir)
	require.Error(t, err)
	assert.Equal(t, "read "+filepath.Join(dir, VersionsFile)+": no such file or directory", err.Error())
}

func TestTypeWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cannot unmarshal !!str `x` into config.Hub", "want a mapping, not `x`"},
		{"cannot unmarshal !!seq into string", "want text, not a list"},
		{"cannot unmarshal !!map into []string", "want a list, not a mapping"},
		{"cannot unmarshal !!str `soon` into time.Duration", "want a duration such as 90m, not `soon`"},
		{"cannot unmarshal !!str `-1` into uint64", "want a whole number, not `-1`"},
		{"field hubb not found in type config.Config", "unknown key hubb (misspelt, or in the wrong section?)"},
		{"something else", "something else"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, typeWords(tc.in), tc.in)
	}
}

// TestPhoneClasses: the embedded classes go from 4 to 16 GiB, each leaving 60% of its RAM to
// the app, and a class that leaves the app more than its RAM is refused by key.
func TestPhoneClasses(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	var rams []int
	for _, pc := range c.Export.PhoneClasses {
		rams = append(rams, pc.RAMGiB)
		assert.InDelta(t, 0.60, float64(pc.AppBytes)/float64(int64(pc.RAMGiB)<<30), 1e-9, "%d GiB", pc.RAMGiB)
	}
	assert.Equal(t, []int{4, 6, 8, 12, 16}, rams)
	c.Export.PhoneClasses[1].AppBytes = 7 << 30
	assert.ErrorContains(t, c.validate(nil), "export.phone_classes.1.app_bytes")
}

// TestPhoneTable picks, per class, the largest window that fits, and none when nothing does.
func TestPhoneTable(t *testing.T) {
	classes := []PhoneClass{{RAMGiB: 4, AppBytes: 2_000}, {RAMGiB: 8, AppBytes: 5_000}, {RAMGiB: 16, AppBytes: 10_000}}
	resident := map[int]int64{2048: 2_500, 4096: 3_000, 8192: 5_000, 16384: 12_000}
	assert.Equal(t, []PhoneFit{{RAMGiB: 4, AppBytes: 2_000}, {RAMGiB: 8, AppBytes: 5_000, Window: 8192}, {RAMGiB: 16, AppBytes: 10_000, Window: 8192}},
		PhoneTable(classes, resident))
	assert.Equal(t, []int{8, 16}, Fits(classes, 5_000))
	assert.Equal(t, []int{}, Fits(classes, 10_001))
}

// TestProcessLimit: a vendor's per-process limit below the class's share is the class's
// budget, at its edge: a window one byte over it does not fit, one at it does; a limit above
// the share changes nothing.
func TestProcessLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    int64
		resident int64
		window   int
		fits     []int
		limited  bool
	}{
		{"at the limit", 6_000, 6_000, 8192, []int{12}, true},
		{"a byte over the limit", 6_000, 6_001, 0, []int{}, true},
		{"a limit above the share", 8_000, 7_000, 8192, []int{12}, false},
		{"no limit", 0, 7_000, 8192, []int{12}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			classes := []PhoneClass{{RAMGiB: 12, AppBytes: 7_000, ProcessLimitBytes: tc.limit}}
			got := PhoneTable(classes, map[int]int64{8192: tc.resident})
			require.Len(t, got, 1)
			assert.Equal(t, tc.window, got[0].Window)
			assert.Equal(t, tc.limited, got[0].ProcessLimited)
			assert.Equal(t, tc.fits, Fits(classes, tc.resident))
		})
	}
	c, err := Default()
	require.NoError(t, err)
	c.Export.PhoneClasses[3].ProcessLimitBytes = 12 << 30
	assert.ErrorContains(t, c.validate(nil), "export.phone_classes.3.process_limit_bytes")
	c.Export.PhoneClasses[3].ProcessLimitBytes = -1
	assert.ErrorContains(t, c.validate(nil), "export.phone_classes.3.process_limit_bytes")
}

// TestJobLimitBounds: the job limit may be anything a GitHub job can run for, up to its
// 6-hour cap, and nothing past it or below one minute.
func TestJobLimitBounds(t *testing.T) {
	for _, tc := range []struct {
		minutes int
		ok      bool
	}{{1, true}, {350, true}, {MaxJobMinutes, true}, {MaxJobMinutes + 1, false}, {0, false}, {-5, false}} {
		c, err := Default()
		require.NoError(t, err)
		c.Export.JobLimitMinutes = tc.minutes
		err = c.validate(nil)
		if tc.ok {
			assert.NoError(t, err, "%d minutes", tc.minutes)
			continue
		}
		assert.ErrorContains(t, err, "export.job_limit_minutes", "%d minutes", tc.minutes)
	}
}

// TestInt8KVFrom: the cache rule at its edge (the window at the setting is int8, one below
// is fp32), never for the fp32 recipe or a setting of 0, and Vulkan refuses it by key.
func TestInt8KVFrom(t *testing.T) {
	r := LLMRecipe{QMode: "8da4w", Int8KVFrom: 8192}
	assert.Equal(t, "int8", r.KVCacheFor("", 8192))
	assert.Equal(t, "fp32", r.KVCacheFor("", 8191))
	assert.Equal(t, "fp32", r.KVCacheFor("fp32", 32768), "the fp32 fallback keeps nothing quantized")
	assert.Equal(t, "fp32", LLMRecipe{QMode: "8da4w"}.KVCacheFor("", 32768))
	c, err := Default()
	require.NoError(t, err)
	c.Export.XNNPACK.Int8KVFrom = 8192
	require.NoError(t, c.validate(nil))
	c.Export.Vulkan.Int8KVFrom = 8192
	assert.ErrorContains(t, c.validate(nil), "export.vulkan.int8_kv_cache_from: must be 0: the pinned ExecuTorch's Vulkan export")
	c.Export.Vulkan.Int8KVFrom, c.Export.XNNPACK.Int8KVFrom = 0, -1
	assert.ErrorContains(t, c.validate(nil), "export.xnnpack.int8_kv_cache_from")
	c.Export.XNNPACK.Int8KVFrom, c.Export.XNNPACK.Int8KVGainsOnly = 0, true
	assert.ErrorContains(t, c.validate(nil), "export.xnnpack.int8_kv_cache_gains_only: is true but int8_kv_cache_from is 0")
}

// TestInt8KVGains: the int8 cache gains a window when one more phone class holds it than
// holds the fp32 one; equal resident bytes at a class's budget still fit it.
func TestInt8KVGains(t *testing.T) {
	classes := []PhoneClass{{RAMGiB: 4, AppBytes: 2_000}, {RAMGiB: 8, AppBytes: 4_000}}
	for _, tc := range []struct {
		fp32, int8 int64
		gains      bool
	}{
		{1_500, 1_000, false}, // both fit every class
		{2_001, 2_000, true},  // int8 at the 4 GB budget, fp32 one byte over
		{2_001, 2_001, false},
		{4_001, 3_000, true},  // int8 brings in the 8 GB class
		{9_000, 5_000, false}, // no class either way
	} {
		assert.Equal(t, tc.gains, Int8KVGains(classes, tc.fp32, tc.int8), "fp32 %d, int8 %d", tc.fp32, tc.int8)
	}
}

// TestCalibrationTimesJustInside: the shares TestStrictErrors refuses at 0 and 1 are taken
// just inside those bounds, and a compile share of 0 (a backend that compiles nothing).
func TestCalibrationTimesJustInside(t *testing.T) {
	y, v := readRepoConfig(t)
	edited := strings.NewReplacer("    share: 0.4842", "    share: 0.999", "    compile_share: 0.8198", "    compile_share: 0").Replace(string(y))
	c, err := Parse("config/pipeline.yaml", []byte(edited), "config/versions.env", v)
	require.NoError(t, err)
	assert.Equal(t, 0.999, c.CalibrationTimes["qnn"].Share)
	assert.Zero(t, c.CalibrationTimes["qnn"].CompileShare)
	edited = strings.Replace(string(y), "    share: 0.4842", "    share: 0.001", 1)
	_, err = Parse("config/pipeline.yaml", []byte(edited), "config/versions.env", v)
	require.NoError(t, err)
}
