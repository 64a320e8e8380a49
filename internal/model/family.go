package model

// familyArchitecture is a model class config.json's architectures may name, and the family
// (internal/family's Key) whose recipes build it.
type familyArchitecture struct{ architecture, family string }

// familyArchitectures are the model classes that have a family, in the order a config
// naming several is matched. They live here, beside the rest of what a config is decoded
// into, so that the family is read once with the architecture (Config.Family); internal/family
// holds everything else a family is, and its tests hold the two tables to each other.
var familyArchitectures = []familyArchitecture{
	{"Qwen3ForCausalLM", "qwen3"},
	{"Lfm2ForCausalLM", "lfm2"},
	{"Qwen2ForCausalLM", "qwen2_5"},
	{"LlamaForCausalLM", "llama"},
	{"Gemma3ForCausalLM", "gemma3"},
	{"SmolLM3ForCausalLM", "smollm3"},
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
