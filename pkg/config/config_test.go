package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if c.Versions.ExecuTorch != "1.4.0" || len(c.Versions.NeuroPilotSDKSHA256) != 64 {
		t.Errorf("versions = %+v", c.Versions)
	}
	if got := c.RunnersFor(c.Export.XNNPACK.Runners); len(got) != 3 || got[0].Label != "blacksmith-8vcpu-ubuntu-2404-arm" {
		t.Errorf("xnnpack runners = %+v", got)
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
		{"misspelt key", "  repo_suffix: -ExecuTorch", "  repo_sufix: -ExecuTorch", []string{"pipeline.yaml", "line 8", "hub.repo_sufix"}},
		{"wrong type", "  limit_per_org: 1500 ", "  limit_per_org: many ", []string{"pipeline.yaml", "line 20", "watch.limit_per_org", "many"}},
		{"impossible group size", "    group_size: 32\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", "    group_size: 24\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", []string{"pipeline.yaml", "line 38", "export.xnnpack.group_size", "power of two"}},
		{"unknown runner", "    runners: [arm-8, arm-16, arm-32]  # smallest first", "    runners: [arm-9]", []string{"line 41", "export.xnnpack.runners.0", "arm-9"}},
		{"unknown chip", "    socs: [MT6991]", "    socs: [MT6999]", []string{"export.mediatek.socs.0", "MT6999"}},
		{"qmode without size model", "    qmode: 8da4w\n    group_size: 32\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", "    qmode: int8\n    group_size: 32\n    embedding_quantize: \"8,0\"\n    embedding_hqq: false              #", []string{"line 37", "export.xnnpack.qmode", "no size model"}},
		{"duplicate window", "context_tiers: [32768, 16384, 8192, 4096, 2048]", "context_tiers: [32768, 16384, 8192, 4096, 4096]", []string{"export.context_tiers.4", "twice"}},
		{"runners out of order", "    runners: [x64-8, x64-16, x64-32]\n  mediatek:", "    runners: [x64-32, x64-8]\n  mediatek:", []string{"export.qnn.runners.1", "smallest first"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited := strings.Replace(string(y), tc.old, tc.new, 1)
			if edited == string(y) {
				t.Fatalf("test edit %q did not apply", tc.old)
			}
			_, err := Parse("config/pipeline.yaml", []byte(edited), "config/versions.env", v)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tc.wantSubstr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestVersionsErrors(t *testing.T) {
	y, v := readRepoConfig(t)
	tests := []struct{ name, old, new, want string }{
		{"unknown key", "PYTHON_VERSION=3.11", "PYTHON_VERSON=3.11", "versions.env:6: unknown key PYTHON_VERSON"},
		{"bad sha", "NEUROPILOT_SDK_SHA256=42155c3b", "NEUROPILOT_SDK_SHA256=XX155c3b", "NEUROPILOT_SDK_SHA256"},
		{"missing", "QAIRT_VERSION=2.37.0.250724\n", "", "QAIRT_VERSION is missing"},
		{"not kv", "PYTHON_VERSION=3.11", "PYTHON_VERSION 3.11", "is not KEY=VALUE"},
		{"short commit", "EXECUTORCH_COMMIT=3dd7ccd1d863fad22639dd2d918ae34a41ce45f0", "EXECUTORCH_COMMIT=3dd7ccd1", "full 40-hex commit"},
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
