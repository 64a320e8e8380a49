package exportllm

import (
	"regexp"

	"github.com/experimentalmachines/exe-expo/internal/run"
)

// Stages times export_llm (and export_with_codes, which wraps it), from the lines the pinned
// ExecuTorch prints (docs/research/run.md cites each, with the release it was read on): loading the checkpoint, the
// source transforms that quantize (8da4w, int8 embeddings, injected codes), torch.export,
// lowering to the delegate plus to_executorch, and writing the .pte. XNNPACK and Vulkan
// print the same markers (_to_edge_and_lower_llama logs the partitioner line for both).
// Patterns are unanchored because the lines pass through Hydra's log format.
var Stages = []run.StageRule{
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
