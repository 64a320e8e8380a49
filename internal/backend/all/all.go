// Package all links every backend exe-expo offers into a program: importing it (blank) runs
// each backend folder's init, which registers it. The commands (cmd/exe-expo, the actions'
// cmd/exe-expo-action, the workflow generator) and the tests that need the full registry
// import it; the library packages do not, so a program or test chooses its backends as
// database/sql's users choose drivers. A new backend is its folder and one line here.
package all

import (
	_ "github.com/experimentalmachines/exe-expo/internal/backend/enn"      // Samsung Exynos, listed and never exported
	_ "github.com/experimentalmachines/exe-expo/internal/backend/mediatek" // MediaTek NeuroPilot (APU)
	_ "github.com/experimentalmachines/exe-expo/internal/backend/qnn"      // Qualcomm QNN (HTP)
	_ "github.com/experimentalmachines/exe-expo/internal/backend/vulkan"   // Vulkan (GPU)
	_ "github.com/experimentalmachines/exe-expo/internal/backend/xnnpack"  // XNNPACK (CPU)
)
