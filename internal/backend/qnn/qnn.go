// Package qnn is Qualcomm's HTP: ExecuTorch's Qualcomm llama script compiles the checkpoints
// of its own registry, per chip, into static graphs of one window.
package qnn

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/cost"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// Backend is QNN's definition.
var Backend = &backend.Backend{
	Name: "qnn", Title: "Qualcomm QNN (HTP)", AppName: "qnn", Rank: 30,
	FamilyRefusals: map[string]string{
		"lfm2": "LFM2 is not in the Qualcomm LLM script's SUPPORTED_LLM_MODELS",
	},
	Supports: func(_ *config.Config, src *model.Source, _ *family.Family) string {
		if _, ok := family.QNNDecoders[src.ID]; !ok {
			return pinned.Say("qnn.registry")
		}
		return ""
	},
	Estimate: estimate,
	Describe: func(cfg *config.Config, src *model.Source, _ *family.Family) (backend.Description, error) {
		q := cfg.Export.QNN
		return backend.Description{
			Recipe:  fmt.Sprintf("QNN HTP, ExecuTorch %s recipe (%s, prefill %d)", family.QNNDecoders[src.ID], q.ModelMode, q.PrefillARLen),
			Targets: q.SoCs, Runners: q.Runners, Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true},
		}, nil
	},
	Gate: backend.Gate{
		Fixed: func(cfg *config.Config) (int, string) {
			return cfg.Export.QNN.MaxContextLen, "fixed by qnn.max_context_len (static NPU graphs)"
		},
		Forced: "forced with --context (static NPU graphs)",
		What:   func(int) string { return "the Qualcomm compile" },
	},
	Recipe: Build,
	// The encodings do not depend on the window (docs/research/qnn-calibration.md): one
	// calibration at calib_window serves every window of the model and chip.
	Calibration: &backend.Calibration{
		Window: func(cfg *config.Config) int { return cfg.Export.QNN.CalibWindow },
		Once:   func(cfg *config.Config) bool { return cfg.Export.QNN.CalibrateOnce },
		// The recipe's SeqMSE search and calib_window decide how its calibration grows with
		// the window; with calibrate_once the workflow's calibrate job does it once.
		Model: func(cfg *config.Config, src *model.Source) cost.Calibrated {
			return Calibration(cfg, family.QNNDecoders[src.ID])
		},
	},
	Check:  check.Spec{SizeError: SizeError, Backend: "qnn", Program: program, SingularEOS: true},
	Stages: Stages,
	Chips: &backend.Chips{Vendor: "Qualcomm", Key: "export.qnn.socs",
		List: func(cfg *config.Config) []string { return cfg.Export.QNN.SoCs }},
	// The calibration rows come from lm_eval's tasks through datasets, and the tokenizer
	// through transformers: their versions say what the rows were made with. The pinned
	// ExecuTorch's backends/qualcomm/__init__.py imports cpuinfo and requests (to fetch QAIRT)
	// without declaring them as wheel dependencies.
	Tools: backend.Tools{Dists: []string{"transformers", "lm_eval", "datasets"}, Requires: []string{"py-cpuinfo", "requests"},
		Versions: func(v config.Versions) map[string]string { return map[string]string{"qairt": v.QAIRT} }},
	// The script's Hub loads are served from the downloaded safetensors
	// (drivers/qnn_launch.py); Llama 3.2 takes Meta's original/ files by flag instead, but
	// its simulated quality figure's fp32 reference reads the safetensors too
	// (internal/export/simulated.go), so every QNN export downloads them.
	Weights: true,
	Card: backend.Card{
		Verified: backend.StructureChecked,
		KVCache:  "16-bit",
		Note: func(tc map[string]string) string {
			return fmt.Sprintf("The `qnn/` folders hold model binaries compiled with Qualcomm's QAIRT %s, used under the Qualcomm AI Stack License. "+
				"No Qualcomm SDK or runtime library is included: they need the QNN runtime of that QAIRT release on the device "+
				"(the app's `executorch-android-qnn` %s brings it as `qnn-runtime`).", tc["qairt"], tc["executorch"])
		},
	},
}

func init() { backend.Register(Backend) }

// Calibration is how decoder's windows are calibrated. Where its recipe searches scales with
// SeqMSE (family.QNNSeqMSECandidates), the search is most of the calibration and grows with
// the window, so every window above export.qnn.calib_window takes its encodings from a
// calibration at that length, made once per model and chip by the workflow with
// calibrate_once. Without a search the calibration is one forward pass per row, which the
// window's graph runs anyway: calibrating at another length saves nothing and costs one
// pass more, so each window calibrates at its own (docs/research/qnn-calibration.md).
func Calibration(cfg *config.Config, decoder string) cost.Calibrated {
	q, n := cfg.Export.QNN, family.QNNSeqMSECandidates[decoder]
	if n == 0 || q.CalibWindow == 0 {
		return cost.Calibrated{Candidates: n}
	}
	return cost.Calibrated{Candidates: n, At: q.CalibWindow, Once: q.CalibrateOnce}
}
