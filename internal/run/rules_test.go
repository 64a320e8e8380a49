package run

import "regexp"

// The tests of the machinery run on rule sets shaped like the backends' own (which live in
// internal/backend/<name> and are tested there against their tools' lines): llmRules has
// export_llm's markers, qnnRules Qualcomm's quantize and compile, mtkRules MediaTek's.
var (
	llmRules = []StageRule{
		{Stage: "load", AtStart: true},
		{Stage: "quantize", Start: regexp.MustCompile(`Checkpoint dtype: `)},
		{Stage: "export", Start: regexp.MustCompile(`(Re-e|E)xporting with:`)},
		{Stage: "lower", Start: regexp.MustCompile(`Lowering model using following partitioner`)},
		{Stage: "save", Start: regexp.MustCompile(`Required memory for activation in bytes`), End: regexp.MustCompile(`Saved exported program to `)},
	}
	qnnRules = []StageRule{
		{Stage: "load", AtStart: true},
		{
			Stage: "quantize",
			Start: regexp.MustCompile(`calling MultiModalManager::quantize|Calibration complete for prepare_pt2e`),
			End:   regexp.MustCompile(`MultiModalManager::quantize completed in`),
		},
		{Stage: "calibration", Start: regexp.MustCompile(`calling TextDecoder::quantize`)},
	}
	mtkRules = []StageRule{
		{Stage: "load", AtStart: true},
		{Stage: "calibration_inputs", Start: regexp.MustCompile(`Preparing Model Calibration Inputs`)},
		{Stage: "aten_export", Start: regexp.MustCompile(`Exporting Chunk \d+ to PTE|Getting ATen Dialect Graph`)},
		{Stage: "calibration", Start: regexp.MustCompile(`Calibrating Model`)},
	}
)
