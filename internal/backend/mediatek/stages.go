package mediatek

import (
	"regexp"

	"github.com/experimentalmachines/exe-expo/internal/run"
)

// Stages times MediaTek's model_export_scripts (qwen.py, llama.py, lfm2.py), from the lines
// the pinned ExecuTorch prints (docs/research/run.md cites each, with the release it was read on): loading, preparing
// the calibration inputs, the ATen exports of each chunk and shape, the per-chunk
// calibration (tqdm "Calibrating Model"), and the NeuroPilot lowering (to_backend through
// mtk_converter/mtk_neuron, then to_executorch) of each chunk.
var Stages = []run.StageRule{
	{Stage: "load", AtStart: true},
	{Stage: "calibration_inputs", Start: regexp.MustCompile(`Preparing Model Calibration Inputs`)},
	{Stage: "aten_export", Start: regexp.MustCompile(`Exporting Chunk \d+ to PTE|Getting ATen Dialect Graph`)},
	{Stage: "calibration", Start: regexp.MustCompile(`Calibrating Model`)},
	{
		Stage: "lowering",
		Start: regexp.MustCompile(`Delegating Edge Program to Neuropilot Backend`),
		End:   regexp.MustCompile(`ET Model (chunk \d+ )?Dest:`),
	},
}
