package backend

import "github.com/experimentalmachines/exe-expo/internal/config"

// config is the lowest package and cannot import the registry, so the registry hands it
// the per-chip backends: pipeline.yaml's chips are validated against the names and keys
// the linked backends give, and a program that links none leaves them unchecked.
func init() { config.ChipBackends = chipBackends }

// chipBackends describes the registered per-chip backends to config, in plan order.
func chipBackends() []config.ChipBackend {
	var out []config.ChipBackend
	for _, b := range registry {
		if b.Chips != nil {
			out = append(out, config.ChipBackend{Name: b.Name, Key: b.Chips.Key, Platform: b.Chips.Platform})
		}
	}
	return out
}
