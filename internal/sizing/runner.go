package sizing

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// Choice is the runner tier for one window, or why none can build it.
type Choice struct {
	Runner   *config.Runner `json:"runner,omitempty"`
	UsesSwap bool           `json:"uses_swap"`
	// Skip says why no tier fits; empty when Runner is set.
	Skip string `json:"skip,omitempty"`
}

// Fit says how a tier compares a need with what it has; the MediaTek gate keeps 15% of
// memory free and 26 GiB of disk spare, the export_llm gate only the host reserve.
type Fit struct {
	Reserve     int64
	Headroom    float64 // fraction of (RAM [+ swap] − reserve) usable; 1 when 0
	DiskMargin  int64
	SwapOnDisk  bool // the swap file takes disk from the runner
	Description string
}

func (f Fit) usable(r config.Runner, withSwap bool) int64 {
	have := r.RAMBytes - f.Reserve
	if withSwap {
		have += r.SwapBytes()
	}
	h := f.Headroom
	if h == 0 {
		h = 1
	}
	return int64(float64(have) * h)
}

func (f Fit) disk(r config.Runner) int64 {
	d := r.DiskBytes - f.DiskMargin
	if f.SwapOnDisk {
		d -= r.SwapBytes()
	}
	return d
}

// PickRunner takes the smallest tier (tiers are listed smallest first) whose RAM alone
// holds the need; failing that, the largest that holds it with its swap. Both also need
// the disk. The largest-first second pass is deliberate: a window that must swap swaps
// least on the biggest machine (Qwen2.5-3B at 32k measured 101.5 GiB).
func PickRunner(tiers []config.Runner, needRAM, needDisk int64, fit Fit) Choice {
	for i := range tiers {
		r := tiers[i]
		if needRAM <= fit.usable(r, false) && needDisk <= fit.disk(r) {
			return Choice{Runner: &r}
		}
	}
	for i := len(tiers) - 1; i >= 0; i-- {
		r := tiers[i]
		if needRAM <= fit.usable(r, true) && needDisk <= fit.disk(r) {
			return Choice{Runner: &r, UsesSwap: true}
		}
	}
	if len(tiers) == 0 {
		return Choice{Skip: "no runner tier is configured for this backend"}
	}
	big := tiers[len(tiers)-1]
	for _, r := range tiers {
		if r.RAMBytes+r.SwapBytes() > big.RAMBytes+big.SwapBytes() {
			big = r
		}
	}
	if needRAM > fit.usable(big, true) {
		return Choice{Skip: fmt.Sprintf("needs about %s of memory; the largest runner (%s) has %s RAM + %d GiB swap",
			GiB(needRAM), big.Label, GiB(big.RAMBytes), big.SwapGiB)}
	}
	return Choice{Skip: fmt.Sprintf("needs about %s of disk; the runners that hold its memory have less", GB(needDisk))}
}

// GiB formats bytes as GiB with one decimal.
func GiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// GB formats bytes as decimal GB with two decimals, as model cards print sizes.
func GB(b int64) string { return fmt.Sprintf("%.2f GB", float64(b)/1e9) }
