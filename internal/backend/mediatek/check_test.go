package mediatek_test

import (
	"bytes"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/mediatek"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMediaTekPayload gives a chunk's two methods a blob other than ptetest's and wants the
// check to read its header: a stand-in without one (ptetest's old text marker), a header
// that disagrees with the blob, or one declaring more values than the call passes, fails.
func TestMediaTekPayload(t *testing.T) {
	chunk := ptetest.MediaTekChunk{Exp: "Qwen3-0.6B_A16W4_4_chunks", PromptTokens: 128, Window: 2048, Chunk: 0}
	want := check.Expect{MediaTek: check.MediaTekChunk{Exp: chunk.Exp, PromptTokens: 128, Window: 2048, Chunk: 0}}
	names := chunk.MethodNames()
	tests := []struct {
		name string
		blob ptetest.Blob
		// problem is the one sentence each method gets; "" means the chunk passes.
		problem string
	}{
		{"ptetest's blob", ptetest.NeuropilotBlob(4096), ""},
		{"a header and its network", ptetest.Blob{Head: ptetest.NeuronHeader(1, 1, 1, 100), Size: 113}, ""},
		{"text instead of a header", ptetest.Blob{Head: []byte("ptetest-neuropilot"), Size: 4096},
			"delegate 0 is not a NeuroPilot payload: its header version is 112, the runtime reads version 1 (first bytes 707465746573742d)"},
		{"zeros", ptetest.Blob{Size: 4096},
			"delegate 0 is not a NeuroPilot payload: its header version is 0, the runtime reads version 1 (first bytes 0000000000000000)"},
		{"shorter than a header", ptetest.Blob{Head: []byte{1, 1, 0, 0, 0}, Size: 12},
			"delegate 0 is not a NeuroPilot payload: the blob is 12 bytes, shorter than the 13-byte NeuronPayloadHeader"},
		{"network longer than the blob", ptetest.Blob{Head: ptetest.NeuronHeader(1, 1, 1, 4096), Size: 4096},
			"delegate 0 is not a NeuroPilot payload: its header declares a 4096-byte compiled network, the blob holds 4083 bytes after the header"},
		{"no network", ptetest.Blob{Head: ptetest.NeuronHeader(1, 1, 1, 0), Size: 13},
			"delegate 0 is not a NeuroPilot payload: its header declares a 0-byte compiled network, the blob holds 0 bytes after the header"},
		{"no inputs", ptetest.Blob{Head: ptetest.NeuronHeader(1, 0, 1, 100), Size: 113},
			"delegate 0 is not a NeuroPilot payload: its header declares 0 inputs and 1 outputs, a compiled graph has at least one of each"},
		{"more values than the call passes", ptetest.Blob{Head: ptetest.NeuronHeader(1, 3, 2, 100), Size: 113},
			"calls delegate 0 with 2 values, its header declares 3 inputs and 2 outputs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := chunk.Spec()
			require.NoError(t, err)
			for i := range spec.Methods {
				spec.Methods[i].Blob = tc.blob
			}
			r := check.Structural(program(t, spec), mediatek.Backend.Check, want)
			wantProblems := []string{}
			if tc.problem != "" {
				for _, n := range names {
					wantProblems = append(wantProblems, n+" "+tc.problem)
				}
			}
			assert.Empty(t, cmp.Diff(wantProblems, r.Problems), "problems (-want +got)")
			assert.Equal(t, tc.problem == "", r.Passed)
		})
	}
}

// program builds and opens a ptetest spec.
func program(t *testing.T, spec ptetest.Spec) *pte.Program {
	t.Helper()
	b, err := ptetest.Build(spec)
	require.NoError(t, err)
	p, err := pte.Open(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	return p
}
