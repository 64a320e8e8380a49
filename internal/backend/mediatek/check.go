package mediatek

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

var mtkMethod = regexp.MustCompile(`^(.+)_([0-9]+)t([0-9]+)c_([0-9]+)$`)

// Chunk checks a chunk file: its prompt and generation methods, each on NeuropilotBackend
// with a blob whose NeuronPayloadHeader agrees with it.
func Chunk(prog *pte.Program, want check.MediaTekChunk) []string {
	names := prog.MethodNames()
	var problems []string
	if want.Exp != "" {
		if w := want.MethodNames(); !slices.Equal(names, w) {
			problems = append(problems, fmt.Sprintf("methods are %s, want %s", list(names), list(w)))
		}
	} else {
		problems = append(problems, mediatekPattern(names)...)
	}
	for _, n := range names {
		problems = append(problems, check.Decoder(prog, pte.NeuropilotBackend, "", n)...)
		problems = append(problems, neuronPayloads(prog.Method(n))...)
	}
	return problems
}

// neuronPayloads checks the header of each NeuropilotBackend blob the method holds: it must
// agree with the blob's size, and each call must pass the delegate as many values as the
// header's inputs and outputs, which the runtime reads. The compiled network itself is
// NeuroPilot's format and is not read.
func neuronPayloads(m *pte.Method) []string {
	var problems []string
	for i, d := range m.Delegates {
		if d.ID != pte.NeuropilotBackend {
			continue
		}
		h, err := pte.ParseNeuronHeader(d.Head, d.BlobSize)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s delegate %d is not a NeuroPilot payload: %v", m.Name, i, err))
			continue
		}
		for _, c := range m.Chains {
			for _, in := range c.Instructions {
				if in.Kind == pte.InstrDelegateCall && int(in.Index) == i && int64(len(in.Args)) < int64(h.Inputs)+int64(h.Outputs) {
					problems = append(problems, fmt.Sprintf("%s calls delegate %d with %d values, its header declares %d inputs and %d outputs",
						m.Name, i, len(in.Args), h.Inputs, h.Outputs))
				}
			}
		}
	}
	return problems
}

// mediatekPattern checks the names when the export's names are not known: two methods of
// one experiment, chunk and cache size, one taking 1 token and one taking the prompt.
func mediatekPattern(names []string) []string {
	if len(names) != 2 {
		return []string{fmt.Sprintf("a MediaTek chunk has a prompt and a generation method, this file has %s", list(names))}
	}
	var tokens []int
	var rest []string
	for _, n := range names {
		m := mtkMethod.FindStringSubmatch(n)
		if m == nil {
			return []string{fmt.Sprintf("method %q is not named <exp>_<tokens>t<cache>c_<chunk>", n)}
		}
		t, _ := strconv.Atoi(m[2])
		tokens = append(tokens, t)
		rest = append(rest, m[1]+"|"+m[3]+"|"+m[4])
	}
	slices.Sort(tokens)
	if rest[0] != rest[1] || tokens[0] != 1 || tokens[1] < 2 {
		return []string{fmt.Sprintf("methods %s are not one chunk's prompt and generation shapes", list(names))}
	}
	return nil
}

func list(s []string) string { return "[" + strings.Join(s, ", ") + "]" }
