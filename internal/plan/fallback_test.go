package plan_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestSelectFallback: the windows whose quantized file failed are rebuilt in fp32 when the
// fp32 file fits the phone (Qwen3-0.6B at 2k: the file and a 2k cache), and skipped with the
// whole story when it does not (at 32k its fp32 KV cache alone is 7.5 GB); a backend
// without fp32 rows and a window the backend does not have are refused.
func TestSelectFallback(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-0.6B", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "")
	var xnn *plan.BackendPlan
	for i := range p.Backends {
		if p.Backends[i].Backend == "xnnpack" {
			xnn = &p.Backends[i]
		}
	}
	require.NotNil(t, xnn)
	fp32At := func(w int) plan.Row {
		for _, r := range xnn.Fallback {
			if r.Window == w {
				return r
			}
		}
		t.Fatalf("no fp32 row at %d", w)
		return plan.Row{}
	}
	require.True(t, fp32At(2048).FitsPhone, "the fp32 2k file fits the phone")
	require.False(t, fp32At(32768).FitsPhone, "the fp32 32k file does not fit the phone")

	failed := []result.Failed{
		{Window: 2048, File: "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte", QMode: "8da4w-gptq", Reason: "decision gate failed: mean KL above 0.0001"},
		{Window: 32768, File: "xnnpack/Qwen3-0.6B-8da4w-gptq-32k.pte", QMode: "8da4w-gptq", Reason: "decision gate failed: 7 of 12 rows agree"},
	}
	s, err := p.SelectFallback("xnnpack", failed)
	require.NoError(t, err)
	r2k := fp32At(2048)
	assert.Empty(t, cmp.Diff([]result.Window{{Window: 2048, Runner: r2k.Runner, SwapGiB: r2k.SwapGiB}}, s.Windows))
	require.Len(t, s.Skipped, 1)
	assert.Equal(t, 32768, s.Skipped[0].Window)
	assert.Regexp(t, `^its 8da4w-gptq file failed the checks \(decision gate failed: 7 of 12 rows agree\) and the fp32 fallback would need [0-9.]+ GB on the phone, over the 5.00 GB budget$`, s.Skipped[0].Reason)

	_, err = p.SelectFallback("vulkan", failed)
	require.Error(t, err)
	assert.Equal(t, "Vulkan (GPU) has no fp32 fallback for Qwen/Qwen3-0.6B: only a backend whose quantized files the decision gate grades falls back", err.Error())
	_, err = p.SelectFallback("xnnpack", []result.Failed{{Window: 3000}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the failed window 3000 is not among XNNPACK (CPU)'s windows (2048, ")

	// a window no runner can build in fp32 is skipped with the runner's reason
	xnn.Fallback[0].Skip = "needs about 300.0 GiB of memory"
	s, err = p.SelectFallback("xnnpack", failed[:1])
	require.NoError(t, err)
	assert.Empty(t, s.Windows)
	require.Len(t, s.Skipped, 1)
	assert.Equal(t, "its 8da4w-gptq file failed the checks (decision gate failed: mean KL above 0.0001) and the fp32 fallback cannot be built: needs about 300.0 GiB of memory", s.Skipped[0].Reason)
}
