package recipe

// Prepare is a tree a recipe's tools run in, which export lays out before the steps (the
// MediaTek scripts', internal/backend/mediatek): an ExecuTorch example folder copied from
// Examples into Copy, with internal/mtkoverlay's files for the family named by Overlay when
// ExecuTorch lacks its script, and every file of Source linked into Weights beside the
// config.json the recipe writes there. The tools write their outputs into Copy and Weights,
// so the user's ExecuTorch tree and model folder are only read.
type Prepare struct {
	Examples string `json:"examples"`
	Copy     string `json:"copy"`
	Overlay  string `json:"overlay,omitempty"`
	Source   string `json:"source"`
	Weights  string `json:"weights"`
}
