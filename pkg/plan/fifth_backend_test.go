package plan_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/backend"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
	"github.com/experimentalmachines/exe-expo/pkg/source"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npu5 is a made-up backend defined in this one file: a 2-byte-per-parameter file and the
// KV cache, one extra 3000-token window, built on XNNPACK's runner tiers, refusing LFM2.
// Registering it must be all it takes for plan to list it, with its own rows.
var npu5 = &backend.Backend{
	Name: "npu5", Title: "Made-up NPU (test)", AppName: "npu5", Rank: 45,
	FamilyRefusals: map[string]string{"lfm2": "npu5 has no short convolution"},
	ExtraWindows:   func(*config.Config) []int { return []int{3000} },
	Estimate: func(_ *config.Config, _ *model.Source, m sizing.Model, _ string, w int) (backend.Size, error) {
		pteBytes := 2 * m.Params
		return backend.Size{KVBytesPerToken: m.KVBytesPerToken(), KVCacheBytes: m.KVCacheBytes(w), PTEBytes: pteBytes,
			HostNeedBytes: 3 * pteBytes, DiskNeedBytes: 2 * pteBytes}, nil
	},
	Describe: func(cfg *config.Config, _ *model.Source) (backend.Description, error) {
		return backend.Description{Recipe: "bf16 weights", Targets: []string{"N5"}, Runners: cfg.Export.XNNPACK.Runners,
			Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true}}, nil
	},
	Supports: func(*config.Config, *model.Source, *family.Family) string { return "" },
}

func TestFifthBackendInPlan(t *testing.T) {
	backend.Register(npu5)
	t.Cleanup(func() { backend.Unregister("npu5") })
	cfg, err := config.Default()
	require.NoError(t, err)

	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "")
	var names []string
	for _, b := range p.Backends {
		names = append(names, b.Backend)
	}
	assert.Equal(t, []string{"xnnpack", "vulkan", "qnn", "mediatek", "npu5", "enn"}, names, "ordered by rank")
	bp := p.Backends[4]
	require.True(t, bp.OK, "npu5 refused Qwen3: %s", bp.Reason)
	assert.Equal(t, "Made-up NPU (test)", bp.Title)
	assert.Equal(t, "bf16 weights", bp.Recipe)
	assert.Equal(t, []string{"N5"}, bp.Targets)
	var windows []int
	for _, r := range bp.Rows {
		windows = append(windows, r.Window)
		assert.Equal(t, 2*src.Params.Total, r.PTEBytes, "window %d: its own size model", r.Window)
		assert.NotEmpty(t, r.Runner+r.Skip, "window %d: a runner or why none", r.Window)
	}
	assert.Equal(t, []int{slices.Min(cfg.Export.ContextTiers), 3000}, windows[:2], "its extra window sorts in")
	assert.Len(t, bp.Rows, len(cfg.Export.ContextTiers)+1)
	assert.Contains(t, p.Verdict.Supported(), "npu5")

	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.Contains(t, text.String(), "Made-up NPU (test)")

	lfm, _, err := source.Open(context.Background(), "LiquidAI/LFM2.5-1.2B-Base", "", nil)
	require.NoError(t, err)
	v := backend.Evaluate(cfg, lfm).Backend("npu5")
	assert.Equal(t, family.BackendVerdict{Backend: "npu5", Reason: "npu5 has no short convolution"}, v)
}
