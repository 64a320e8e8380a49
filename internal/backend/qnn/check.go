package qnn

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// program wants the hybrid pair (kv_forward and prefill_forward) on the HTP, or only
// kv_forward for a kv-mode export, each delegate blob a QNN payload.
func program(prog *pte.Program, want check.Expect) []string {
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
