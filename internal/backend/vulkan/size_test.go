package vulkan_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/vulkan"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/internal/sizing/sizingtest"
	"github.com/stretchr/testify/require"
)

// fleet is the Blacksmith x86 fleet as measured
// (docs/research/sizing.md#runner-fleet-and-test-hosts).
var fleet = []config.Runner{
	{Name: "small", Label: "blacksmith-8vcpu-ubuntu-2404", RAMBytes: 33_229_729_792, DiskBytes: 160e9, SwapGiB: 24},
	{Name: "medium", Label: "blacksmith-16vcpu-ubuntu-2404", RAMBytes: 66_577_858_560, DiskBytes: 750e9, SwapGiB: 64},
	{Name: "large", Label: "blacksmith-32vcpu-ubuntu-2404", RAMBytes: 121_766_014_976, DiskBytes: 1.5e12, SwapGiB: 96},
}

// TestPickRunner: the tier Vulkan's host need picks per window on the measured fleet.
func TestPickRunner(t *testing.T) {
	fit := sizing.Fit{Reserve: 1_000_000_000}
	tests := []struct {
		id   string
		want map[int]string
	}{
		{"Qwen/Qwen3-0.6B", map[int]string{2048: "small", 8192: "small", 16384: "small", 32768: "large"}},
		{"Qwen/Qwen3-4B", map[int]string{2048: "small", 8192: "small", 16384: "medium", 32768: "large"}},
		{"meta-llama/Llama-3.2-1B-Instruct", map[int]string{2048: "small", 16384: "small", 32768: "medium"}},
	}
	for _, tc := range tests {
		m := sizingtest.Sized(t, tc.id)
		for w, want := range tc.want {
			c := sizing.PickRunner(fleet, vulkan.HostNeed(m, w), 0, fit)
			if c.Runner == nil || c.Runner.Name != want {
				t.Errorf("%s at %d: %+v, want %s", tc.id, w, c, want)
			}
		}
	}
	m := sizingtest.Sized(t, "Qwen/Qwen3-4B")
	if c := sizing.PickRunner(fleet, vulkan.HostNeed(m, 32768), 0, fit); !c.UsesSwap {
		t.Errorf("Qwen3-4B at 32k should need the large tier's swap: %+v", c)
	}
	if c := sizing.PickRunner(fleet, vulkan.HostNeed(m, 131072), 0, fit); c.Runner != nil || c.Skip == "" {
		t.Errorf("131072 fits: %+v", c)
	}
}

// TestBoundsKeepSizesInRange: at internal/model's bounds nothing Vulkan sizes wraps or
// saturates (internal/sizing's test of the same name holds the shared sizes).
func TestBoundsKeepSizesInRange(t *testing.T) {
	for _, m := range sizingtest.AtBounds(t) {
		for _, w := range sizingtest.BoundWindows {
			v, err := vulkan.PTEBytes(m, "fp32", w)
			require.NoError(t, err)
			sizingtest.InRange(t, v, "pte at %d tokens, %d parameters", w, m.Params)
			sizingtest.InRange(t, vulkan.HostNeed(m, w), "host need at %d tokens, %d parameters", w, m.Params)
		}
	}
}
