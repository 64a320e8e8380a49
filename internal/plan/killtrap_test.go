package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// traps are the classes on which the app offers a row's file and the phone cannot hold the
// window with cache; nil when the plan did not size that cache.
func traps(cfg *config.Config, r plan.Row, cache string) []int {
	res, ok := r.ResidentByCache[cache]
	if !ok {
		return nil
	}
	return appview.KillTraps(cfg.Export.PhoneClasses, r.PTEBytes, res)
}

// TestQwen3PlanKeepsNoKillTrapInt8Removes holds the one KV-cache decision to the app's fit,
// which is blind to the window: in the Qwen3-1.7B plan no window the app offers keeps an fp32
// cache where the int8 cache would leave fewer phone classes on which the app offers the
// file and the phone kills it; the traps nothing removes are Vulkan's long windows (Vulkan
// keeps an fp32 cache only) and XNNPACK 32k on a 6 GB phone (3.71 GB with the int8 cache
// against 3 GiB; the app wants 3.69 GB of its 4.19), which config.json, appview and the
// card name. With the int8
// cache configured for no window (int8_kv_cache_from past every window), a window whose fp32
// cache is a trap still gets the int8 cache, and one that is no trap keeps fp32.
func TestQwen3PlanKeepsNoKillTrapInt8Removes(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	for _, from := range []int{0, 65536} {
		cfg, err := config.Default()
		require.NoError(t, err)
		if from > 0 {
			cfg.Export.XNNPACK.Int8KVFrom, cfg.Export.XNNPACK.Int8KVGainsOnly = from, false
		}
		p := plan.Build(cfg, src, "")
		var left []string
		caches := map[int]string{}
		for _, bp := range p.Backends {
			b := backend.ByName(bp.Backend)
			if b == nil || !appview.AppOffers(b.AppName, bp.Backend+"/model.pte") {
				continue
			}
			for _, r := range bp.Rows {
				if r.Skip != "" || r.KVCache == "" {
					continue
				}
				if bp.Backend == "xnnpack" {
					caches[r.Window] = r.KVCache
				}
				kept := appview.KillTraps(cfg.Export.PhoneClasses, r.PTEBytes, r.ResidentBytes)
				for _, c := range []string{"fp32", "int8"} {
					if other := traps(cfg, r, c); other != nil {
						require.LessOrEqual(t, len(kept), len(other), "%s %d keeps the %s cache and the %s cache would trap fewer classes", bp.Backend, r.Window, r.KVCache, c)
					}
				}
				if len(kept) > 0 {
					left = append(left, bp.Backend+" "+r.Label)
				}
			}
		}
		require.Equal(t, []string{"xnnpack 32k", "vulkan 16k", "vulkan 32k"}, left, "from %d", from)
		if from > 0 {
			require.Equal(t, "fp32", caches[4096], "no trap at 4k: the 6 GB phone holds it with fp32")
			require.Equal(t, "int8", caches[8192], "8k with fp32 is a trap on a 6 GB phone and int8 removes it")
		}
	}
}
