// Package check decides whether an exported .pte is what the export asked for. This file
// holds the structural checks, which read the program (pkg/pte) without running it: the
// decoder methods exist, run on the intended backend, and carry the requested metadata.
package check

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// Spec is what a backend's programs must be, as the backend's definition (internal/backend)
// states it: the check itself knows no backend names, so a new backend brings its own.
type Spec struct {
	// Backend names the backend in verdicts.
	Backend string
	// Program lists what is wrong with the program's methods for this backend (the
	// decoder methods, their delegate and payloads); nil means nothing can be checked.
	Program func(prog *pte.Program, want Expect) []string
	// SingularEOS: the backend's tool may write one EOS id as get_eos_id instead of the
	// get_eos_ids list (Qualcomm's static llama), and is then held to that getter.
	SingularEOS bool
	// SizeError is how far (a fraction) a file built as sized was measured off its sizing
	// estimate (each backend states its own, internal/backend/<name>); Size fails a file further off.
	SizeError float64
}

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
	// KVCache is the KV cache the recipe asked for ("fp32", "int8"), held to forward's
	// cache tensors of MaxContextLen positions; KVBytesPerToken is the size model's figure
	// for it, held exactly (0: not held). Empty where the cache is not in the program's
	// planned memory: the NPU backends, and Vulkan, whose delegate keeps it on the GPU.
	KVCache         string `json:"kv_cache,omitempty"`
	KVBytesPerToken int64  `json:"kv_bytes_per_token,omitempty"`
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
	// Coverage is each code method's delegate coverage, in program order: the operators,
	// linears and weight bytes inside its delegates and outside them on CPU kernels.
	Coverage []pte.Coverage `json:"delegate_coverage"`
	// KVCache is the KV cache read back from the file, when the recipe named one.
	KVCache *KVCache `json:"kv_cache,omitempty"`
}

// Verdict is the one-line summary inspect prints.
func (r Result) Verdict() string {
	if r.Passed {
		return fmt.Sprintf("structural check (%s): passed", r.Backend)
	}
	return fmt.Sprintf("structural check (%s): failed: %s", r.Backend, strings.Join(r.Problems, "; "))
}

// Structural checks prog against what an export by spec's backend should have produced.
// Each problem is a sentence naming the method or metadata value at fault.
func Structural(prog *pte.Program, spec Spec, want Expect) Result {
	r := Result{Kind: "structural", Backend: spec.Backend, Problems: []string{},
		Methods: prog.MethodNames(), Delegates: map[string][]string{}, Metadata: prog.Metadata(),
		Coverage: prog.Coverages()}
	for _, m := range prog.Methods {
		r.Delegates[m.Name] = m.Backends()
		if r.Delegates[m.Name] == nil {
			r.Delegates[m.Name] = []string{}
		}
	}
	if spec.Program == nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s has no structural check: nothing is exported to it", spec.Backend))
	} else {
		r.Problems = append(r.Problems, spec.Program(prog, want)...)
		for _, c := range r.Coverage {
			r.Problems = append(r.Problems, LinearsOutside(c, spec.Backend)...)
		}
	}
	r.Problems = append(r.Problems, metadata(r.Metadata, want, spec.SingularEOS)...)
	kv, problems := kvProblems(prog, want)
	r.KVCache = kv
	r.Problems = append(r.Problems, problems...)
	r.Passed = len(r.Problems) == 0
	return r
}

// Decoder checks that each named method exists, runs on the delegate id and, when sig is
// set, that the delegate's blobs start with that signature.
func Decoder(prog *pte.Program, id, sig string, names ...string) []string {
	var problems []string
	for _, name := range names {
		m := prog.Method(name)
		if m == nil {
			problems = append(problems, fmt.Sprintf("missing decoder method %q (has %s)", name, list(prog.MethodNames())))
			continue
		}
		problems = append(problems, runsOn(m, id, sig)...)
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
func StructuralFile(path string, spec Spec, want Expect) Result {
	prog, err := pte.OpenFile(path)
	if err != nil {
		return Result{Kind: "structural", Backend: spec.Backend, Problems: []string{"program did not load: " + err.Error()},
			Methods: []string{}, Delegates: map[string][]string{}, Metadata: pte.Metadata{}, Coverage: []pte.Coverage{}}
	}
	return Structural(prog, spec, want)
}
