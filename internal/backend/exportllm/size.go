package exportllm

import "github.com/experimentalmachines/exe-expo/internal/sizing"

// The lowering's mask copies: export_llm's partitioner holds the causal masks about 2.6
// times, measured under Vulkan (docs/research/sizing.md#constants), and the need it gives
// keeps a 10% margin. It is Vulkan's host need and the floor of XNNPACK's.
const (
	MaskCopies = 2.6
	NeedMargin = 1.1
)

// LoweringNeed is the export peak plus the extra mask copies the partitioner makes, with
// the margin.
func LoweringNeed(m sizing.Model, window int) int64 {
	peak := float64(m.ExportPeakBytes(window))
	return sizing.FloatBytes((peak + (MaskCopies-1)*float64(m.MaskBytes(window))) * NeedMargin)
}
