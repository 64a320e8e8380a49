package model

// familyArchitecture is a model class config.json's architectures may name, and the family
// (internal/family's Key) whose recipes build it.
// leaveOut, when set, are the tensor-name prefixes of a multimodal wrapper whose text model
// is what the family exports (Qwen3.5: the vision tower and the multi-token-prediction
// head): the parameter count, and every size read from it, leaves them out.
type familyArchitecture struct {
	architecture, family string
	leaveOut             []string
}

// familyArchitectures are the model classes that have a family, in the order a config
// naming several is matched. They live here, beside the rest of what a config is decoded
// into, so that the family is read once with the architecture (Config.Family); internal/family
// holds everything else a family is, and its tests hold the two tables to each other.
var familyArchitectures = []familyArchitecture{
	{"Qwen3ForCausalLM", "qwen3", nil},
	{"Lfm2ForCausalLM", "lfm2", nil},
	{"Qwen2ForCausalLM", "qwen2_5", nil},
	{"LlamaForCausalLM", "llama", nil},
	{"Gemma3ForCausalLM", "gemma3", nil},
	{"SmolLM3ForCausalLM", "smollm3", nil},
	// ExecuTorch's Qwen3.5 converter keeps model.language_model.* and drops the rest
	// (docs/research/new-families.md, A).
	{"Qwen3_5ForConditionalGeneration", "qwen3_5", []string{"model.visual.", "mtp."}},
	{"Phi3ForCausalLM", "phi4mini", nil},
}

// FamilyOf is the family key of the first model class in familyArchitectures that archs
// names; "" when none has a family.
func FamilyOf(archs []string) string {
	for _, fa := range familyArchitectures {
		for _, a := range archs {
			if a == fa.architecture {
				return fa.family
			}
		}
	}
	return ""
}

// LeftOut is what the text-only export of a multimodal wrapper leaves out of the
// checkpoint: the tensor-name prefixes of the first model class in archs that has a
// family; nil when the whole checkpoint is exported.
func LeftOut(archs []string) []string {
	for _, fa := range familyArchitectures {
		for _, a := range archs {
			if a == fa.architecture {
				return fa.leaveOut
			}
		}
	}
	return nil
}

// FamilyArchitectures lists the model classes of the family called key, in match order,
// for internal/family to show and test.
func FamilyArchitectures(key string) []string {
	var out []string
	for _, fa := range familyArchitectures {
		if fa.family == key {
			out = append(out, fa.architecture)
		}
	}
	return out
}
