package qnn

import (
	"fmt"
	"math"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// QNN (16-bit activations, 4-bit block weights, hybrid prefill + decode graphs): fitted to
// Qwen3-0.6B at 2k and 4k on SM8750 (664,296,448 and 686,009,344 B), the only published
// measurements; the window term is 3 × head_dim per layer per token. The host need has no
// measured model of QAIRT's compile: a 24 GiB floor or 20 B per parameter, growing with the
// window (docs/research/sizing.md#constants).
const (
	BytesPerParam     = 0.8545
	WindowPerLayerDim = 3
	FloorBytes        = 24 << 30
	HostBytesPerParam = 20
	WindowScale       = 16384
	DiskFixedBytes    = 30_000_000_000 // QAIRT SDK, build folders
)

// SizeError is the size check's tolerance of a QNN file (see xnnpack.SizeError for what it
// catches): the worst measured error today is 0.12% (Qwen3-0.6B), and internal/sizing's
// TestCheckBoundsCoverTheFiles holds it above that.
const SizeError = 0.01

// PTEBytes estimates the hybrid QNN decoder file.
func PTEBytes(m sizing.Model, window int) int64 {
	a := m.Arch
	return sizing.AddBytes(sizing.FloatBytes(float64(m.Params)*BytesPerParam), sizing.MulBytes(int64(window), a.Layers, a.HeadDim, WindowPerLayerDim))
}

// HostNeed is the compile's memory: the floor or 20 B per parameter, whichever is larger,
// times 1 + window / 16384 (Qwen3-0.6B measured 15.6-15.7 GB at 2k and 4k).
func HostNeed(m sizing.Model, window int) int64 {
	base := max(float64(FloorBytes), float64(m.Params)*HostBytesPerParam)
	return sizing.FloatBytes(math.Ceil(base * (1 + float64(window)/WindowScale)))
}

// DiskNeed is the side files, the SDK and the build folders.
func DiskNeed(m sizing.Model, pteBytes int64) int64 {
	return sizing.AddBytes(sizing.MulBytes(m.Params, sizing.SourceBytesPerParam), pteBytes, DiskFixedBytes)
}

func estimate(cfg *config.Config, _ *model.Source, m sizing.Model, _ string, w int) (backend.Size, error) {
	q := cfg.Export.QNN
	z := backend.Size{KVBytesPerToken: m.NPUKVCacheBytes(1), KVCacheBytes: m.NPUKVCacheBytes(w), PTEBytes: PTEBytes(m, w), HostNeedBytes: HostNeed(m, w)}
	z.DiskNeedBytes = DiskNeed(m, z.PTEBytes)
	if w < q.PrefillARLen {
		return z, fmt.Errorf("window %d is below the prefill length %d", w, q.PrefillARLen)
	}
	return z, nil
}
