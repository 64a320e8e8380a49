// Package family decides whether a Hugging Face model can be exported and to which
// backends: its family (from the architecture), the app's naming rules, the size caps, and
// (through each backend's rule, internal/backend) per backend either nothing (supported) or the
// sentence that says why not.
package family

import (
	"regexp"
	"sync/atomic"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Family is one architecture family with everything that differs between families. The
// model classes config.json names for it are internal/model's (model.FamilyArchitectures),
// because a config's family is decoded with the rest of it when the model is opened.
type Family struct {
	Key string
	// AppTokens are the app family tokens a release of this family may carry in its name.
	AppTokens []string
	// NamePattern must match a release's name (catches later versions on the same class).
	NamePattern *regexp.Regexp
	// ModelType is the config.json model_type the family's recipes expect.
	ModelType string
	// TextModel is true for a family released as a multimodal wrapper (a vision_config, a
	// ...ForConditionalGeneration class) whose text model is what exe-expo exports, as
	// ExecuTorch's own recipe does (Qwen3.5): eligibility then says so instead of refusing
	// the checkpoint as multimodal, and its parameters are counted without the vision tower
	// (model.LeftOut).
	TextModel bool
	// Route is how ExecuTorch builds the family's XNNPACK and Vulkan files.
	Route Route
}

// The tools a family's XNNPACK and Vulkan files can be built with.
const (
	// RouteExportLLM is ExecuTorch's export_llm, the route of every family exported today.
	RouteExportLLM = "export_llm"
	// RouteOptimum is optimum-executorch's exporter, the only one that builds Gemma 3 and
	// SmolLM3 (docs/research/new-families.md, C and D): XNNPACK only, fp32 KV cache.
	RouteOptimum = "optimum-executorch"
	// OptimumStep is the recipe step (and report stage) that runs the optimum route, by
	// which an export report says its file came that way (exe-expo costs).
	OptimumStep = "optimum_export"
	// OptimumVersion is the optimum-executorch release python/export.lock pins (the last
	// one; its transformers pin is the lock's), named in the files' descriptions.
	OptimumVersion = "1.1.0"
)

// Route is how a family's CPU and GPU files are built, and what exe-expo still lacks to
// drive it. Plan sizes the windows of a route that exe-expo cannot drive yet, so the tables
// are there before the export is, but the backend refuses the model until Missing is empty:
// a plan never promises a file the exporter cannot make.
type Route struct {
	Tool string
	// Detail names what the route builds for the family (the export_llm model classes).
	Detail string
	// Missing says what exe-expo lacks to export by this route; empty when it exports.
	Missing string
}

// Label is the route in a few words for plan's recipe line: the tool and its detail.
func (r Route) Label() string {
	if r.Detail == "" {
		return r.Tool
	}
	return r.Tool + " (" + r.Detail + ")"
}

// Families, in the order model.FamilyOf matches a config's architectures.
var Families = []*Family{
	{
		Key: "qwen3", AppTokens: []string{"qwen3"},
		NamePattern: regexp.MustCompile(`(?i)qwen3([^.\d]|$)`), ModelType: "qwen3", Route: exportLLM,
	},
	{
		Key: "lfm2", AppTokens: []string{"lfm25"},
		NamePattern: regexp.MustCompile(`(?i)lfm2\.5([^.\d]|$)`), ModelType: "lfm2", Route: exportLLM,
	},
	{
		Key: "qwen2_5", AppTokens: []string{"qwen25"},
		NamePattern: regexp.MustCompile(`(?i)qwen2\.5([^.\d]|$)`), ModelType: "qwen2", Route: exportLLM,
	},
	{
		Key: "llama", AppTokens: []string{"llama32", "smollm2"},
		NamePattern: regexp.MustCompile(`(?i)llama-?3\.2([^.\d]|$)|smollm2(\D|$)`), ModelType: "llama", Route: exportLLM,
	},
	{
		Key: "gemma3", AppTokens: []string{"gemma3"},
		NamePattern: regexp.MustCompile(`(?i)gemma-?3([^.\dn]|$)`), ModelType: "gemma3_text",
		Route: Route{Tool: RouteOptimum, Detail: "recipe xnnpack, custom SDPA and KV cache"},
	},
	{
		Key: "smollm3", AppTokens: []string{"smollm3"},
		NamePattern: regexp.MustCompile(`(?i)smollm3(\D|$)`), ModelType: "smollm3",
		Route: Route{Tool: RouteOptimum, Detail: "recipe xnnpack, custom SDPA and KV cache"},
	},
	{
		Key: "qwen3_5", AppTokens: []string{"qwen35"},
		NamePattern: regexp.MustCompile(`(?i)qwen3\.5([^.\d]|$)`), ModelType: "qwen3_5_text", TextModel: true,
		Route: Route{Tool: RouteExportLLM, Detail: "qwen3_5_0_8b, qwen3_5_2b, qwen3_5_4b"},
	},
	{
		Key: "phi4mini", AppTokens: []string{"phi4mini"},
		NamePattern: regexp.MustCompile(`(?i)phi-?4-?mini(\D|$)`), ModelType: "phi3",
		Route: Route{Tool: RouteExportLLM, Detail: "phi_4_mini"},
	},
}

// exportLLM is the route of the families export builds today.
var exportLLM = Route{Tool: RouteExportLLM}

// ByArchitecture returns the family of the first architecture that has one
// (model.FamilyOf). An opened model's family was read when its config was decoded: Of.
func ByArchitecture(archs []string) *Family {
	return ByKey(model.FamilyOf(archs))
}

// Of is the family of an opened model's config, as decoded when the model was opened
// (model.Config.Family); nil for no config, or an architecture without a family.
func Of(c *model.Config) *Family {
	if c == nil {
		return nil
	}
	return ByKey(c.Family())
}

// lookups counts the calls of ByKey in this process; Lookups reads it.
var lookups atomic.Int64

// Lookups is how many times this process has looked a family up (ByKey, and Of and
// ByArchitecture through it). It is a test hook, as model.Decodes is for config.json: the
// tests of plan, export and the CLI hold each command to one lookup per model it opens,
// the one in Evaluate, which is what keeps the conversion, the recipe, the sizing model and
// the gate on the family the verdict decided (Verdict.Fam) instead of deciding it again.
func Lookups() int64 { return lookups.Load() }

// ByKey returns the family called key.
func ByKey(key string) *Family {
	lookups.Add(1)
	for _, f := range Families {
		if f.Key == key {
			return f
		}
	}
	return nil
}

// QNNDecoders is the pinned ExecuTorch's Qualcomm LLM registry (config/runtime-facts.yaml,
// qnn.registry): the source repos its script can
// compile, and the --decoder_model key for each.
var QNNDecoders = map[string]string{
	"Qwen/Qwen3-0.6B":                     "qwen3-0_6b",
	"Qwen/Qwen3-1.7B":                     "qwen3-1_7b",
	"Qwen/Qwen2.5-0.5B":                   "qwen2_5-0_5b",
	"Qwen/Qwen2.5-1.5B":                   "qwen2_5-1_5b",
	"google/gemma-3-1b-it":                "gemma3-1b",
	"HuggingFaceTB/SmolLM2-135M-Instruct": "smollm2_135m",
	"HuggingFaceTB/SmolLM3-3B":            "smollm3-3b",
	"meta-llama/Llama-3.2-1B-Instruct":    "llama3_2-1b_instruct",
	"meta-llama/Llama-3.2-3B-Instruct":    "llama3_2-3b_instruct",
}

// QNNSeqMSECandidates is the seq_mse_candidates each decoder's registry entry sets (absent:
// 0, no SeqMSE search): plan's time model counts the search, which makes a calibration
// dozens of forward passes long (internal/cost, docs/research/qnn-calibration.md).
var QNNSeqMSECandidates = map[string]int{"qwen3-0_6b": 50, "llama3_2-1b_instruct": 50}

// QNNMetaCheckpoint lists the decoders that take Meta's original/ checkpoint files.
var QNNMetaCheckpoint = map[string]bool{"llama3_2-1b_instruct": true, "llama3_2-3b_instruct": true}

// QNNParams is the ExecuTorch params file (relative to the ExecuTorch tree) of each decoder
// that does not take Meta's checkpoint.
var QNNParams = map[string]string{
	"qwen3-0_6b":   "examples/models/qwen3/config/0_6b_config.json",
	"qwen3-1_7b":   "examples/models/qwen3/config/1_7b_config.json",
	"qwen2_5-0_5b": "examples/models/qwen2_5/config/0_5b_config.json",
	"qwen2_5-1_5b": "examples/models/qwen2_5/config/1_5b_config.json",
	"gemma3-1b":    "examples/models/gemma3/config/1b_config.json",
	"smollm2_135m": "examples/models/smollm2/135M_config.json",
	"smollm3-3b":   "examples/models/smollm3/3b_config.json",
}
