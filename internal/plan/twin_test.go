package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestMediaTekWindowsHaveTheirXNNPACKTwin: ExecuServe runs a MediaTek window only beside the
// XNNPACK file of the same window, which decodes for it. In the Qwen3-1.7B plan every
// MediaTek window built has one, and the 512 window (MediaTek's cache_size, which XNNPACK
// does not build) is left out with the rule in its reason; planned alone, MediaTek leaves out
// the same.
func TestMediaTekWindowsHaveTheirXNNPACKTwin(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	cfg, err := config.Default()
	require.NoError(t, err)
	for _, only := range []string{"", "mediatek"} {
		p := plan.Build(cfg, src, only)
		cpu := map[int]bool{}
		all := plan.Build(cfg, src, "")
		for _, bp := range all.Backends {
			for _, r := range bp.Rows {
				if bp.Backend == "xnnpack" && r.Skip == "" {
					cpu[r.Window] = true
				}
			}
		}
		var left []int
		for _, bp := range p.Backends {
			if bp.Backend != "mediatek" {
				continue
			}
			for _, r := range bp.Rows {
				switch {
				case r.Skip == "":
					require.True(t, cpu[r.Window], "MediaTek %s is built without an XNNPACK %s", r.Label, r.Label)
				case r.Window < 2048:
					require.Contains(t, r.Skip, plan.TwinRule)
					left = append(left, r.Window)
				}
			}
		}
		require.Equal(t, []int{512}, left, "planned %q", only)
	}
}
