package run

import "regexp"

// The default rule sets below are built from the log lines ExecuTorch v1.4.0 prints
// (3dd7ccd1); docs/research/run.md cites each line and says which are guesses. Patterns are
// unanchored because export_llm's lines pass through Hydra's log format and Qualcomm's
// through "[INFO <time> <file>:<line>]".

// StagesXNNPACK times export_llm (and export_with_codes, which wraps it): loading the
// checkpoint, the source transforms that quantize (8da4w, int8 embeddings, injected codes),
// torch.export, lowering to the delegate plus to_executorch, and writing the .pte.
var StagesXNNPACK = []StageRule{
	{Stage: "load", AtStart: true},
	{Stage: "quantize", Start: regexp.MustCompile(`Checkpoint dtype: `)},
	{Stage: "export", Start: regexp.MustCompile(`(Re-e|E)xporting with:`)},
	{Stage: "lower", Start: regexp.MustCompile(`Lowering model using following partitioner`)},
	{
		Stage: "save",
		Start: regexp.MustCompile(`Required memory for activation in bytes`),
		End:   regexp.MustCompile(`Saved exported program to `),
	},
}

// StagesVulkan is StagesXNNPACK: Vulkan goes through the same export_llm path and prints
// the same markers (_to_edge_and_lower_llama logs the partitioner line too).
var StagesVulkan = StagesXNNPACK

// StagesQNN times Qualcomm's llama.py (ExecuTorch v1.4.0 wrappers log "calling X" and "X
// completed in Ns"): building the model, the quantize step apart from calibration
// (dataset build, convert_pt2e), the calibration loop with SeqMSE, and the HTP compile of the
// prefill and decode graphs by the QNN SDK.
var StagesQNN = []StageRule{
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

// StagesMediaTek times MediaTek's model_export_scripts (qwen.py, llama.py, lfm2.py):
// loading, preparing the calibration inputs, the ATen exports of each chunk and shape, the
// per-chunk calibration (tqdm "Calibrating Model"), and the NeuroPilot lowering
// (to_backend through mtk_converter/mtk_neuron, then to_executorch) of each chunk.
var StagesMediaTek = []StageRule{
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
