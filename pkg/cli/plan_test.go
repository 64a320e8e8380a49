package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPlanCommand(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"plan", "Qwen/Qwen3-1.7B"}, ExitOK, "Verdict: eligible for XNNPACK (CPU), Vulkan (GPU), Qualcomm QNN (HTP), MediaTek NeuroPilot (APU)", ""},
		{[]string{"plan", "Qwen/Qwen3-30B-A3B", "--backend", "xnnpack"}, ExitNotEligible, "mixture-of-experts checkpoint", ""},
		{[]string{"plan", "--json", "Qwen/Qwen3-8B"}, ExitNotEligible, `"eligible": false`, ""},
		{[]string{"plan", "Qwen/Qwen3-1.7B", "--backend", "coreml"}, ExitFailed, "", `unknown backend "coreml"`},
		{[]string{"plan"}, ExitFailed, "", "give exactly one MODEL"},
		{[]string{"plan", "bad id"}, ExitFailed, "", "neither a local model folder nor a Hugging Face model id"},
		{[]string{"plan", "--help"}, ExitOK, "Usage: exe-expo plan MODEL", ""},
		{[]string{"help", "plan"}, ExitOK, "--revision", ""},
		{[]string{"nope"}, ExitFailed, "", `unknown command "nope"`},
		{[]string{"--help"}, ExitOK, "plan", ""},
	}
	for _, tc := range tests {
		code, out, errs := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.code, out, errs)
		}
	}
}

func TestPlanJSONShape(t *testing.T) {
	code, out, _ := run(t, "plan", "Qwen/Qwen3-1.7B", "--json", "--backend", "xnnpack")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var p struct {
		Model    string
		Offline  bool
		Backends []struct {
			Backend string
			Windows []struct {
				Window       int   `json:"window"`
				KVCacheBytes int64 `json:"kv_cache_bytes"`
			} `json:"windows"`
		}
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if !p.Offline || len(p.Backends) != 1 || p.Backends[0].Windows[4].KVCacheBytes != 7_516_192_768 {
		t.Errorf("plan = %+v", p)
	}
}
