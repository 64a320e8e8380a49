package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestPlanDecodesConfigOnce: a plan opens its model once and decodes its config.json once;
// the verdict, every backend's rule and recipe plan, the sizing model and every window's
// row, the text and the JSON all read the value decoded then. The models cover each way a
// plan goes: eligible everywhere, refused outright (MoE), an architecture that cannot be
// sized (gemma-3-4b-it leaves its head counts to transformers' defaults), LFM2's hybrid
// layers, Llama's scaled RoPE, and a local folder opened from a fixture config. The plan
// looks the family up once too (family.Lookups), in the verdict: the sizing model and the
// backends' recipe lines take the verdict's.
func TestPlanDecodesConfigOnce(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	fixture, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	folder := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(folder, "config.json"), fixture, 0o644))
	open := func(ref string) func(t *testing.T) *model.Source {
		return func(t *testing.T) *model.Source {
			src, _, err := source.Open(context.Background(), ref, "main", nil)
			require.NoError(t, err)
			return src
		}
	}
	tests := []struct {
		name string
		open func(t *testing.T) *model.Source
	}{
		{"Qwen3-1.7B", open("Qwen/Qwen3-1.7B")},
		{"Qwen3-30B-A3B", open("Qwen/Qwen3-30B-A3B")},
		{"gemma-3-4b-it", open("google/gemma-3-4b-it")},
		{"LFM2.5-1.2B-Base", open("LiquidAI/LFM2.5-1.2B-Base")},
		{"Llama-3.2-1B-Instruct", open("meta-llama/Llama-3.2-1B-Instruct")},
		{"local folder", func(t *testing.T) *model.Source {
			src, err := source.OpenDir(context.Background(), folder, "Qwen/Qwen3-0.6B")
			require.NoError(t, err)
			return src
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, lookups := model.Decodes(), family.Lookups()
			src := tc.open(t)
			p := plan.Build(cfg, src, "")
			require.NoError(t, p.WriteText(&bytes.Buffer{}))
			_, err := json.Marshal(p)
			require.NoError(t, err)
			assert.Equal(t, int64(1), model.Decodes()-before, "config.json decodes of one plan")
			assert.Equal(t, int64(1), family.Lookups()-lookups, "family lookups of one plan")
		})
	}
}
