package pte_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseNeuronHeader reads headers laid out as preprocess.py packs them ("<BIII").
func TestParseNeuronHeader(t *testing.T) {
	tests := []struct {
		name    string
		head    []byte
		size    int64
		want    pte.NeuronHeader
		wantErr string
	}{
		{"preprocess output", ptetest.NeuronHeader(1, 67, 65, 1000), 1013, pte.NeuronHeader{Version: 1, Inputs: 67, Outputs: 65, DataLen: 1000}, ""},
		{"extra head bytes", append(ptetest.NeuronHeader(1, 1, 1, 3), 9, 9, 9), 16, pte.NeuronHeader{Version: 1, Inputs: 1, Outputs: 1, DataLen: 3}, ""},
		{"empty", nil, 0, pte.NeuronHeader{}, "the blob is 0 bytes, shorter than the 13-byte NeuronPayloadHeader"},
		{"head cut short", ptetest.NeuronHeader(1, 1, 1, 100)[:12], 113, pte.NeuronHeader{}, "shorter than the 13-byte"},
		{"version 2", ptetest.NeuronHeader(2, 1, 1, 100), 113, pte.NeuronHeader{Version: 2, Inputs: 1, Outputs: 1, DataLen: 100}, "its header version is 2"},
		{"no outputs", ptetest.NeuronHeader(1, 1, 0, 100), 113, pte.NeuronHeader{Version: 1, Inputs: 1, DataLen: 100}, "0 outputs"},
		{"network beyond the blob", ptetest.NeuronHeader(1, 1, 1, 101), 113, pte.NeuronHeader{Version: 1, Inputs: 1, Outputs: 1, DataLen: 101},
			"its header declares a 101-byte compiled network, the blob holds 100 bytes after the header"},
		{"blob beyond the network", ptetest.NeuronHeader(1, 1, 1, 99), 113, pte.NeuronHeader{Version: 1, Inputs: 1, Outputs: 1, DataLen: 99}, "a 99-byte compiled network"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := pte.ParseNeuronHeader(tc.head, tc.size)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.want, h)
		})
	}
}

// TestNeuronSignature opens built programs: a NeuropilotBackend blob with a header that
// agrees with its size is NEURON; the same bytes under another delegate id, or a
// NeuropilotBackend blob without the header, are not.
func TestNeuronSignature(t *testing.T) {
	good := ptetest.NeuropilotBlob(4096)
	tests := []struct {
		name, id string
		blob     ptetest.Blob
		inline   bool
		want     string
	}{
		{"ptetest's blob", pte.NeuropilotBackend, good, false, pte.SigNeuron},
		{"inline", pte.NeuropilotBackend, good, true, pte.SigNeuron},
		{"other backend", pte.EnnBackend, good, false, "unknown 0101000000010000"},
		{"text marker", pte.NeuropilotBackend, ptetest.Blob{Head: []byte("ptetest-neuropilot"), Size: 4096}, false, "unknown 707465746573742d"},
		{"header disagrees with size", pte.NeuropilotBackend, ptetest.Blob{Head: ptetest.NeuronHeader(1, 1, 1, 4096), Size: 4096}, false, "unknown 0101000000010000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := open(t, ptetest.Spec{Methods: []ptetest.Method{{Name: "m", Backend: tc.id, Blob: tc.blob, Inline: tc.inline}}})
			d := p.Method("m").Delegates[0]
			assert.Equal(t, tc.want, d.Signature)
			head := tc.blob.Head[:min(len(tc.blob.Head), 16)]
			assert.Equal(t, head, d.Head[:len(head)], "Head holds the blob's first bytes")
			assert.Len(t, d.Head, 16)
		})
	}
}
