package qnn

import (
	"regexp"

	"github.com/experimentalmachines/exe-expo/internal/run"
)

// Stages times Qualcomm's llama.py, from the lines the pinned ExecuTorch prints
// (docs/research/run.md cites each, with the release it was read on; its wrappers log "calling X" and "X completed in Ns"):
// building the model, the quantize step apart from calibration (dataset build,
// convert_pt2e), the calibration loop with SeqMSE, and the HTP compile of the prefill and
// decode graphs by the QNN SDK. Patterns are unanchored because the lines pass through
// "[INFO <time> <file>:<line>]".
var Stages = []run.StageRule{
	{Stage: "load", AtStart: true},
	{
		Stage: "quantize",
		Start: regexp.MustCompile(`calling MultiModalManager::quantize|Calibration complete for prepare_pt2e`),
		End:   regexp.MustCompile(`MultiModalManager::quantize completed in`),
	},
	{Stage: "calibration", Start: regexp.MustCompile(`calling TextDecoder::quantize`)},
	{
		Stage: "htp_compile",
		Start: regexp.MustCompile(`calling MultiModalManager::compile`),
		End:   regexp.MustCompile(`MultiModalManager::compile completed in`),
	},
}
