package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// omegaPython is Debian's python3 with python3-omegaconf, which the real LlmConfig is
// merged with; skipped without it, a failure under EXE_EXPO_CI=1.
func omegaPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	out, err := exec.Command(py, "-c", "import omegaconf").CombinedOutput()
	if err == nil {
		return py
	}
	msg := fmt.Sprintf("%s cannot import omegaconf (%v: %s)", py, err, strings.TrimSpace(string(out)))
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatalf("EXE_EXPO_CI=1 and %s; .ci/run installs python3-omegaconf with apt", msg)
	}
	t.Skipf("skipping: %s (apt-get install -y python3-omegaconf)", msg)
	return ""
}

// TestSolveConfigRealLlmConfig: the solve driver's LlmConfig is ExecuTorch 1.4.0's own,
// merged as export_llm merges it, for the class and params each family's plan writes; the
// eager model's own statements then build ModelArgs from it. Llama 3.2's use_scaled_rope,
// which reads model_class.value, gets the factor 32 that Llama 3.2's class sets; the
// driver's former plain-attribute config fails there, and a class 1.4.0 does not register
// fails before any solve.
func TestSolveConfigRealLlmConfig(t *testing.T) {
	py := omegaPython(t)
	dir := t.TempDir()
	drivers := filepath.Join(dir, "drivers")
	_, err := WriteScripts(drivers)
	require.NoError(t, err)
	ids := []string{"meta-llama/Llama-3.2-1B-Instruct", "Qwen/Qwen3-4B", "LiquidAI/LFM2.5-1.2B-Base", "HuggingFaceTB/SmolLM2-360M-Instruct"}
	type input struct {
		ModelClass string `json:"model_class"`
		Params     string `json:"params"`
	}
	var cases []input
	for i, id := range ids {
		src, err := snapshot.Load(context.Background(), id)
		require.NoError(t, err)
		plan, err := family.XNNPACKPlan(family.ByArchitecture(src.Config.Architectures()), src.Config)
		require.NoError(t, err, id)
		b, err := json.Marshal(plan.Params)
		require.NoError(t, err)
		p := filepath.Join(dir, fmt.Sprintf("params-%d.json", i))
		require.NoError(t, os.WriteFile(p, b, 0o644))
		cases = append(cases, input{plan.ModelClass, p})
	}
	in := filepath.Join(dir, "cases.json")
	b, err := json.Marshal(cases)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, b, 0o644))

	type result struct {
		ModelClass      string `json:"model_class"`
		DtypeOverride   string `json:"dtype_override"`
		UseKVCache      bool   `json:"use_kv_cache"`
		MaxContextLen   int    `json:"max_context_len"`
		RopeScaleFactor int    `json:"rope_scale_factor"`
	}
	var got struct {
		Cases           []result `json:"cases"`
		PlainAttributes string   `json:"plain_attributes"`
		UnknownClass    string   `json:"unknown_class"`
	}
	cmd := exec.Command(py, filepath.Join("testdata", "solve_config_check.py"), drivers, in)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "solve_config_check.py: %s", stderr)
	require.NoError(t, json.Unmarshal(out, &got), "solve_config_check.py printed %s", out)

	want := []result{
		{"llama3_2", "fp32", false, 2048, 32},
		{"qwen3_4b", "fp32", false, 2048, 8}, // 8: ModelArgs' default, untouched without use_scaled_rope
		{"lfm2_5_1_2b", "fp32", false, 2048, 8},
		{"smollm2", "fp32", false, 2048, 8},
	}
	assert.Equal(t, want, got.Cases)
	assert.Equal(t, "AttributeError: 'str' object has no attribute 'value'", got.PlainAttributes)
	assert.Contains(t, got.UnknownClass, "ValidationError: Invalid value 'llama3_3', expected one of [")
}
