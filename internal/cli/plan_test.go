package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		assert.Equal(t, tc.code, code, "%v\nstdout: %s\nstderr: %s", tc.args, out, errs)
		assert.Contains(t, out, tc.out, "%v", tc.args)
		assert.Contains(t, errs, tc.err, "%v", tc.args)
	}
}

func TestPlanJSONShape(t *testing.T) {
	code, out, _ := run(t, "plan", "Qwen/Qwen3-1.7B", "--json", "--backend", "xnnpack")
	require.Equal(t, ExitOK, code)
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
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	assert.True(t, p.Offline)
	require.Len(t, p.Backends, 1)
	require.Len(t, p.Backends[0].Windows, 5)
	// 32k keeps an int8 cache: 28 layers × 2 × 8 KV heads × (128 + 5) bytes × 32,768.
	assert.Equal(t, int64(1_952_448_512), p.Backends[0].Windows[4].KVCacheBytes)
}

// modelFolder writes a local model folder called name holding Qwen3-0.6B's config.json with
// edit applied (nil: unchanged), or raw bytes when edit is a string.
func modelFolder(t *testing.T, name string, edit any) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	b, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	switch e := edit.(type) {
	case string:
		b = []byte(e)
	case map[string]any:
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		for k, v := range e {
			m[k] = v
		}
		b, err = json.Marshal(m)
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644))
	return dir
}

// Local folders and bad config.json files: a folder is judged by its own name unless --id
// names the Hub id it holds, and a config.json no model can have is exit 2 naming the key.
func TestPlanLocalFolders(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	plain := modelFolder(t, "weights", nil)
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"folder name without a family", []string{"plan", plain}, ExitNotEligible,
			`the app (the openweights Android app, which loads these files) has no chat template for experimentalmachines/weights-ExecuTorch: it picks one by the family name in a file's name (read lower-cased, letters and digits only), which must be Qwen3 for the qwen3 architecture, and this one carries none; that is the local folder's name: pass --id ORG/NAME, the Hub id the folder holds`, ""},
		{"folder with --id", []string{"plan", plain, "--id", "Qwen/Qwen3-0.6B"}, ExitOK, "Verdict: eligible for XNNPACK (CPU), Vulkan (GPU), Qualcomm QNN (HTP), MediaTek NeuroPilot (APU)", ""},
		{"--id that is no Hub id", []string{"plan", plain, "--id", "weights"}, ExitFailed, "", "plan: --id \"weights\" is not a Hugging Face model id (org/name)\n"},
		{"--id with a Hub id", []string{"plan", "Qwen/Qwen3-1.7B", "--id", "Qwen/Qwen3-1.7B"}, ExitFailed, "",
			"plan: --id names the Hub id a local model folder holds, and Qwen/Qwen3-1.7B is not a folder\n"},
		{"config.json holding null", []string{"plan", modelFolder(t, "m", "null")}, ExitFailed, "", "config.json: not a JSON object: it holds null"},
		{"vocab 10^16", []string{"plan", modelFolder(t, "m", map[string]any{"vocab_size": 10000000000000000})}, ExitFailed, "",
			"config.json: vocab_size 10000000000000000 is outside 1..4194304"},
		{"layers 2^62", []string{"plan", modelFolder(t, "m", map[string]any{"num_hidden_layers": 4611686018427387904})}, ExitFailed, "",
			"config.json: num_hidden_layers 4611686018427387904 is outside 1..1024"},
		{"KV heads", []string{"plan", modelFolder(t, "m", map[string]any{"num_key_value_heads": 3})}, ExitFailed, "",
			"config.json: num_key_value_heads 3 does not divide num_attention_heads 16"},
		{"offline revision", []string{"plan", "Qwen/Qwen3-1.7B", "--revision", "v1.0"}, ExitOK,
			"Qwen/Qwen3-1.7B at v1.0 (not checked: the embedded snapshot is not tied to any revision)\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, tc.args...)
			assert.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errs)
			assert.Contains(t, out, tc.out)
			assert.Contains(t, errs, tc.err)
			if tc.code == ExitFailed {
				assert.Empty(t, out, "a refused config prints no plan")
			}
		})
	}
}
