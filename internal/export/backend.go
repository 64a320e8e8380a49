package export

import (
	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// spec is the requested backend's definition; Validate has refused names without one.
func (o *Options) spec() *backend.Backend { return backend.ByName(o.Backend) }

// stagesOf is the stage rule set a recipe step names (the backend whose tool it runs).
func stagesOf(name string) []run.StageRule {
	if b := backend.ByName(name); b != nil {
		return b.Stages
	}
	return nil
}
