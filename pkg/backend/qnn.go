package backend

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/check"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/recipe"
	"github.com/experimentalmachines/exe-expo/pkg/run"
	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

// QNN is Qualcomm's HTP: ExecuTorch's Qualcomm llama script compiles the checkpoints of its
// own registry, per chip, into static graphs of one window.
var QNN = &Backend{
	Name: "qnn", Title: "Qualcomm QNN (HTP)", AppName: "qnn", Rank: 30,
	FamilyRefusals: map[string]string{
		"lfm2": "LFM2 is not in the Qualcomm LLM script's SUPPORTED_LLM_MODELS",
	},
	Supports: func(_ *config.Config, src *model.Source, _ *family.Family) string {
		if _, ok := family.QNNDecoders[src.ID]; !ok {
			return "no entry for this checkpoint in ExecuTorch 1.4.0's Qualcomm LLM scripts (they compile fixed registry checkpoints only)"
		}
		return ""
	},
	Estimate: qnnEstimate,
	Describe: func(cfg *config.Config, src *model.Source) (Description, error) {
		q := cfg.Export.QNN
		return Description{
			Recipe:  fmt.Sprintf("QNN HTP, ExecuTorch %s recipe (%s, prefill %d)", family.QNNDecoders[src.ID], q.ModelMode, q.PrefillARLen),
			Targets: q.SoCs, Runners: q.Runners, Fit: sizing.Fit{Reserve: cfg.Export.HostReserveBytes, SwapOnDisk: true},
		}, nil
	},
	Gate: Gate{
		Fixed: func(cfg *config.Config) (int, string) {
			return cfg.Export.QNN.MaxContextLen, "fixed by qnn.max_context_len (static NPU graphs)"
		},
		Forced: "forced with --context (static NPU graphs)",
		What:   func(int) string { return "the Qualcomm compile" },
	},
	Recipe: recipe.QNN,
	Check:  check.Spec{SizeError: sizing.PTEErrorQNN, Backend: "qnn", Program: qnnProgram, SingularEOS: true},
	Stages: run.StagesQNN,
	Chips: &Chips{Vendor: "Qualcomm", Key: "export.qnn.socs",
		List: func(cfg *config.Config) []string { return cfg.Export.QNN.SoCs }},
	// The calibration rows come from lm_eval's tasks through datasets, and the tokenizer
	// through transformers: their versions say what the rows were made with. ExecuTorch
	// 1.4's backends/qualcomm/__init__.py imports cpuinfo and requests (to fetch QAIRT)
	// without declaring them as wheel dependencies.
	Tools: Tools{Dists: []string{"transformers", "lm_eval", "datasets"}, Requires: []string{"py-cpuinfo", "requests"},
		Versions: func(v config.Versions) map[string]string { return map[string]string{"qairt": v.QAIRT} }},
	// The script's Hub loads are served from the downloaded safetensors
	// (drivers/qnn_launch.py); Llama 3.2 takes Meta's original/ files by flag instead.
	WeightsFor: func(src *model.Source) bool {
		return !family.QNNMetaCheckpoint[family.QNNDecoders[src.ID]]
	},
	Card: Card{
		Verified: structureChecked,
		Note: func(tc map[string]string) string {
			return fmt.Sprintf("The `qnn/` folders hold model binaries compiled with Qualcomm's QAIRT %s, used under the Qualcomm AI Stack License. "+
				"No Qualcomm SDK or runtime library is included: they need the QNN runtime of that QAIRT release on the device "+
				"(the app's `executorch-android-qnn` %s brings it as `qnn-runtime`).", tc["qairt"], tc["executorch"])
		},
	},
}

func qnnEstimate(cfg *config.Config, _ *model.Source, m sizing.Model, _ string, w int) (Size, error) {
	q := cfg.Export.QNN
	z := Size{KVBytesPerToken: m.NPUKVCacheBytes(1), KVCacheBytes: m.NPUKVCacheBytes(w), PTEBytes: m.PTEBytesQNN(w), HostNeedBytes: m.HostNeedQNN(w)}
	z.DiskNeedBytes = m.DiskNeedQNN(z.PTEBytes)
	if w < q.PrefillARLen {
		return z, fmt.Errorf("window %d is below the prefill length %d", w, q.PrefillARLen)
	}
	return z, nil
}

// qnnProgram wants the hybrid pair (kv_forward and prefill_forward) on the HTP, or only
// kv_forward for a kv-mode export.
func qnnProgram(prog *pte.Program, want check.Expect) []string {
	names := []string{"kv_forward", "prefill_forward"}
	var problems []string
	switch want.QNNMode {
	case "", "hybrid":
	case "kv":
		names = names[:1]
	default:
		problems = append(problems, fmt.Sprintf("unknown QNN mode %q (want hybrid or kv)", want.QNNMode))
	}
	return append(problems, check.Decoder(prog, pte.QnnBackend, pte.SigQNN, names...)...)
}

func init() { Register(QNN) }
