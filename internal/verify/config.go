package verify

import (
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// GateFrom is the gate cfg describes: its rows, its prompt file and the fidelity text from
// the config folder cfgDir ("" for the embedded one). source is the fp32 source folder,
// "" until it is known. The solve (which writes the reference), the gate and the audit
// build their gate here, so the three grade on the same rows and text.
func GateFrom(cfg *config.Config, cfgDir, source string) (Gate, error) {
	p, id, err := gate.LoadPrompt(cfg.Gate.PromptFile)
	if err != nil {
		return Gate{}, err
	}
	text, err := gate.LoadFidelityText(cfgDir, cfg.Gate)
	if err != nil {
		return Gate{}, err
	}
	return Gate{Rows: gate.RowsFrom(cfg.Gate), Prompt: p, PromptID: id, Fidelity: &text, Source: source}, nil
}
