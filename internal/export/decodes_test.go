package export_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// TestExportDecodesConfigOnce: an export opens its model once and decodes its config.json
// once, whether it builds, is skipped by the gate or is refused. The window check, the
// eligibility and every backend's rule, the gate's sizes, the recipe and the conversion all
// read the value decoded when the model was opened. A Hub model's download brings
// config.json again and decodes nothing. The family is looked up once as well, by the
// verdict (family.Lookups): the gate's sizing model, the recipe and the conversion carry
// the verdict's.
func TestExportDecodesConfigOnce(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		opts func(t *testing.T) export.Options
		code int
		// lookups is 1, the verdict's, for every export that reaches the verdict; 0 for one
		// refused before it.
		lookups int64
	}{
		{"XNNPACK from a local folder", func(t *testing.T) export.Options {
			return options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
		}, 0, 1},
		{"XNNPACK from the Hub, after the download", func(t *testing.T) export.Options {
			o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
			o.Model, o.Fetcher = "Qwen/Qwen3-0.6B", &fakeHub{dir: o.Model, sha: sha}
			return o
		}, 0, 1},
		{"QNN from the Hub", func(t *testing.T) export.Options {
			o, _, _ := qnnOptions(t, "Qwen/Qwen3-0.6B", "ok", sha)
			return o
		}, 0, 1},
		{"MediaTek LFM2 with the overlay", func(t *testing.T) export.Options {
			return lfm2Options(t, v140Tree(t))
		}, 0, 1},
		{"skipped by the gate", func(t *testing.T) export.Options {
			o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 32768)
			o.Model, o.Fetcher = "Qwen/Qwen3-1.7B", &fakeHub{dir: o.Model, sha: sha}
			return o
		}, 4, 1},
		{"over the model's limit", func(t *testing.T) export.Options {
			return options(t, "HuggingFaceTB/SmolLM2-135M-Instruct", "xnnpack", "ok", 16384)
		}, 2, 0}, // refused by the window check, before the verdict
		{"not eligible", func(t *testing.T) export.Options {
			return options(t, "LiquidAI/LFM2.5-1.2B-Base", "xnnpack", "ok", 2048)
		}, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts(t)
			before, lookups := model.Decodes(), family.Lookups()
			_, err := export.Run(context.Background(), o)
			require.Equal(t, tc.code, export.ExitCode(err), "%v", err)
			assert.Equal(t, int64(1), model.Decodes()-before, "config.json decodes of one export")
			assert.Equal(t, tc.lookups, family.Lookups()-lookups, "family lookups of one export")
		})
	}
}

// TestCheckpointDecodesConfigOnce: the solve's checkpoint (PrepareCheckpoint) opens its
// model once too; the recipe, the conversion and the Checkpoint's Arch read the value
// decoded then, and the recipe and the conversion the family the verdict looked up.
func TestCheckpointDecodesConfigOnce(t *testing.T) {
	o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 0)
	before, lookups := model.Decodes(), family.Lookups()
	ck, err := export.PrepareCheckpoint(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, int64(1), model.Decodes()-before, "config.json decodes of one checkpoint")
	assert.Equal(t, int64(1), family.Lookups()-lookups, "family lookups of one checkpoint")
	assert.Equal(t, int64(28), ck.Arch.Layers)
}
