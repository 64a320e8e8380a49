// Package check decides whether an exported .pte is what the export asked for. This file
// holds the structural checks, which read the program (pkg/pte) without running it: the
// decoder methods exist, run on the intended backend, and carry the requested metadata.
package check

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// Backends are the backend names the structural check knows.
var Backends = []string{"xnnpack", "vulkan", "qnn", "mediatek"}

// backendIDs maps a backend name to its delegate id and the blob signature its payload
// starts with ("" for MediaTek, whose payload has no magic: mediatek reads its header).
var backendIDs = map[string]struct{ id, sig string }{
	"xnnpack":  {pte.XnnpackBackend, pte.SigXNNPACK},
	"vulkan":   {pte.VulkanBackend, pte.SigVulkan},
	"qnn":      {pte.QnnBackend, pte.SigQNN},
	"mediatek": {pte.NeuropilotBackend, ""},
}

// BackendID returns the delegate id of a backend name, or "".
func BackendID(backend string) string { return backendIDs[backend].id }

// Expect is what the export requested. Zero fields are not checked.
type Expect struct {
	// MaxSeqLen and MaxContextLen are get_max_seq_len and get_max_context_len.
	MaxSeqLen     int64 `json:"max_seq_len,omitempty"`
	MaxContextLen int64 `json:"max_context_len,omitempty"`
	// BOS is get_bos_id; EOS is get_eos_ids, in order (for a QNN program that carries only
	// Qualcomm's singular get_eos_id, that one).
	BOS *int64  `json:"bos,omitempty"`
	EOS []int64 `json:"eos,omitempty"`
	// Metadata holds further exact values, e.g. get_state_reset_at_zero: 1 for LFM2.
	Metadata map[string]any `json:"metadata,omitempty"`
	// QNNMode is "hybrid" (default: kv_forward and prefill_forward) or "kv".
	QNNMode string `json:"qnn_mode,omitempty"`
	// MediaTek names one chunk file's methods; without Exp only their pattern is checked.
	MediaTek MediaTekChunk `json:"mediatek"`
}

// Result is the structural verdict as the export report records it.
type Result struct {
	Kind     string   `json:"kind"`
	Backend  string   `json:"backend"`
	Passed   bool     `json:"passed"`
	Problems []string `json:"problems"`
	// Methods are the program's method names, sorted.
	Methods []string `json:"methods"`
	// Delegates maps each method to its sorted delegate ids.
	Delegates map[string][]string `json:"delegates"`
	Metadata  pte.Metadata        `json:"metadata"`
}

// Verdict is the one-line summary inspect prints.
func (r Result) Verdict() string {
	if r.Passed {
		return fmt.Sprintf("structural check (%s): passed", r.Backend)
	}
	return fmt.Sprintf("structural check (%s): failed: %s", r.Backend, strings.Join(r.Problems, "; "))
}

// Structural checks prog against what an export for backend should have produced. Each
// problem is a sentence naming the method or metadata value at fault.
func Structural(prog *pte.Program, backend string, want Expect) Result {
	r := Result{Kind: "structural", Backend: backend, Problems: []string{},
		Methods: prog.MethodNames(), Delegates: map[string][]string{}, Metadata: prog.Metadata()}
	for _, m := range prog.Methods {
		r.Delegates[m.Name] = m.Backends()
		if r.Delegates[m.Name] == nil {
			r.Delegates[m.Name] = []string{}
		}
	}
	var problems []string
	switch backend {
	case "xnnpack", "vulkan":
		problems = append(problems, decoder(prog, backend, "forward")...)
		problems = append(problems, requireMetadata(r.Metadata, "get_max_seq_len")...)
	case "qnn":
		names := []string{"kv_forward", "prefill_forward"}
		switch want.QNNMode {
		case "", "hybrid":
		case "kv":
			names = names[:1]
		default:
			problems = append(problems, fmt.Sprintf("unknown QNN mode %q (want hybrid or kv)", want.QNNMode))
		}
		problems = append(problems, decoder(prog, backend, names...)...)
	case "mediatek":
		problems = append(problems, mediatek(prog, want.MediaTek)...)
	default:
		problems = append(problems, fmt.Sprintf("unknown backend %q (want one of %s)", backend, strings.Join(Backends, ", ")))
	}
	problems = append(problems, metadata(r.Metadata, want, backend)...)
	r.Problems = append(r.Problems, problems...)
	r.Passed = len(r.Problems) == 0
	return r
}

// decoder checks that each named method exists and runs on the backend's delegate.
func decoder(prog *pte.Program, backend string, names ...string) []string {
	want := backendIDs[backend]
	var problems []string
	for _, name := range names {
		m := prog.Method(name)
		if m == nil {
			problems = append(problems, fmt.Sprintf("missing decoder method %q (has %s)", name, list(prog.MethodNames())))
			continue
		}
		problems = append(problems, runsOn(m, want.id, want.sig)...)
	}
	return problems
}

// runsOn checks one method: the delegate id is among its delegates, it calls a delegate,
// and each of that backend's blobs starts with the backend's signature.
func runsOn(m *pte.Method, id, sig string) []string {
	calls := m.Count(pte.InstrDelegateCall)
	has := false
	for _, d := range m.Delegates {
		has = has || d.ID == id
	}
	if !has || calls == 0 {
		return []string{fmt.Sprintf("%s does not run on %s: delegates %s, %d delegate calls",
			m.Name, id, list(m.Backends()), calls)}
	}
	var problems []string
	for i, d := range m.Delegates {
		if d.ID == id && sig != "" && d.Signature != sig {
			problems = append(problems, fmt.Sprintf("%s delegate %d is not a %s payload: its blob starts %s",
				m.Name, i, sig, d.Signature))
		}
	}
	return problems
}

func list(s []string) string { return "[" + strings.Join(s, ", ") + "]" }

// StructuralFile opens path and checks it; a file that does not load is a failed check
// whose one problem says why, so the report records it like any other verdict.
func StructuralFile(path, backend string, want Expect) Result {
	prog, err := pte.OpenFile(path)
	if err != nil {
		return Result{Kind: "structural", Backend: backend, Problems: []string{"program did not load: " + err.Error()},
			Methods: []string{}, Delegates: map[string][]string{}, Metadata: pte.Metadata{}}
	}
	return Structural(prog, backend, want)
}
