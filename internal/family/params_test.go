package family_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParamsMatchExecuTorch compares the generated params JSON with ExecuTorch's own files.
func TestParamsMatchExecuTorch(t *testing.T) {
	tests := []struct {
		id, file, class string
		skipKeys        []string
	}{
		{"Qwen/Qwen3-0.6B", "qwen3_0_6b.json", "qwen3_0_6b", nil},
		{"Qwen/Qwen3-1.7B", "qwen3_1_7b.json", "qwen3_1_7b", nil},
		{"Qwen/Qwen3-4B", "qwen3_4b.json", "qwen3_4b", nil},
		{"Qwen/Qwen2.5-1.5B", "qwen2_5_1_5b.json", "qwen2_5_1_5b", nil},
		{"Qwen/Qwen2.5-0.5B-Instruct", "qwen2_5_0_5b.json", "qwen2_5_0_5b", nil},
		{"HuggingFaceTB/SmolLM2-135M-Instruct", "smollm2_135m.json", "smollm2", nil},
		{"LiquidAI/LFM2.5-1.2B-Base", "lfm2_5_1_2b.json", "lfm2_5_1_2b", nil},
		{"LiquidAI/LFM2-1.2B", "lfm2_1_2b.json", "lfm2_5_1_2b", []string{"layer_types"}},
		// ffn_dim_multiplier would double the RoPE table and switch a 4k file to LongRoPE's
		// long factors (phi4miniPlan); it changes nothing else once hidden_dim is given.
		{"microsoft/Phi-4-mini-instruct", "phi_4_mini.json", "phi_4_mini", []string{"ffn_dim_multiplier"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			src := load(t, tc.id)
			fam := family.ByArchitecture(src.Config.Architectures())
			plan, err := family.XNNPACKPlan(fam, src.Config)
			if err != nil {
				t.Fatal(err)
			}
			if plan.ModelClass != tc.class {
				t.Errorf("model_class = %s, want %s", plan.ModelClass, tc.class)
			}
			want := readJSON(t, filepath.Join("testdata", "et-params", tc.file))
			got := roundTrip(t, plan.Params)
			for k, w := range want {
				if contains(tc.skipKeys, k) {
					continue
				}
				g, _ := json.Marshal(got[k])
				wb, _ := json.Marshal(w)
				if string(g) != string(wb) {
					t.Errorf("%s = %s, ExecuTorch has %s", k, g, wb)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok && k != "head_dim" {
					t.Errorf("generated key %s is not in ExecuTorch's file", k)
				}
			}
		})
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func roundTrip(t *testing.T, v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestQwen35ParamsMatchExecuTorch: the export_llm params planned from each Qwen3.5 release's
// config.json are ExecuTorch's own params file for its class, key for key (the RoPE theta's
// spelling aside: the config writes 10000000, ExecuTorch 10000000.0).
func TestQwen35ParamsMatchExecuTorch(t *testing.T) {
	for _, tc := range []struct{ size, class string }{{"0.8B", "qwen3_5_0_8b"}, {"2B", "qwen3_5_2b"}, {"4B", "qwen3_5_4b"}} {
		t.Run(tc.size, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "hf-qwen3_5", "Qwen3.5-"+tc.size+".json"))
			require.NoError(t, err)
			c, err := model.ParseConfig("config.json", b)
			require.NoError(t, err)
			plan, err := family.XNNPACKPlan(family.ByKey("qwen3_5"), c)
			require.NoError(t, err)
			assert.Equal(t, tc.class, plan.ModelClass)
			want := readJSON(t, filepath.Join("testdata", "et-params", tc.class+".json"))
			got := roundTrip(t, plan.Params)
			for k, w := range want {
				g, _ := json.Marshal(got[k])
				wb, _ := json.Marshal(w)
				if k == "rope_theta" || k == "norm_eps" {
					assert.InDelta(t, w, got[k], 1e-12, k)
					continue
				}
				assert.Equal(t, string(wb), string(g), k)
			}
			for k := range got {
				_, ok := want[k]
				assert.True(t, ok, "generated key %s is not in ExecuTorch's file", k)
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
