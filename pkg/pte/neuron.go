package pte

import (
	"encoding/binary"
	"fmt"
)

// NeuronHeaderSize is the length of the packed NeuronPayloadHeader that ExecuTorch's
// NeuropilotBackend.preprocess writes in front of the compiled network
// (backends/mediatek/preprocess.py, struct "<BIII"; runtime/include/NeuronPayloadHeader.h).
const NeuronHeaderSize = 13

// neuronHeaderVersion is HEADER_VERSION in preprocess.py, the only one the runtime reads.
const neuronHeaderVersion = 1

// SigNeuron is the signature of a NeuropilotBackend blob whose header agrees with its size.
const SigNeuron = "NEURON"

// NeuronHeader is a MediaTek delegate blob's header. The compiled network after it is
// NeuroPilot's own format, which is not public; the header is what can be checked.
type NeuronHeader struct {
	Version uint8
	// Inputs and Outputs are the lowered graph's user inputs and outputs; the runtime reads
	// that many arguments of the DelegateCall, inputs first.
	Inputs, Outputs uint32
	// DataLen is the compiled network's length in bytes.
	DataLen uint32
}

// ParseNeuronHeader reads the header from a blob's first bytes (head) and checks it
// against the blob's size: version 1, at least one input and one output, and a compiled
// network that fills the rest of the blob exactly. The error says what disagrees.
func ParseNeuronHeader(head []byte, blobSize int64) (NeuronHeader, error) {
	var h NeuronHeader
	if blobSize < NeuronHeaderSize || len(head) < NeuronHeaderSize {
		return h, fmt.Errorf("the blob is %d bytes, shorter than the %d-byte NeuronPayloadHeader", blobSize, NeuronHeaderSize)
	}
	le := binary.LittleEndian
	h = NeuronHeader{Version: head[0], Inputs: le.Uint32(head[1:]), Outputs: le.Uint32(head[5:]), DataLen: le.Uint32(head[9:])}
	switch {
	case h.Version != neuronHeaderVersion:
		return h, fmt.Errorf("its header version is %d, the runtime reads version %d (first bytes %x)", h.Version, neuronHeaderVersion, head[:min(len(head), 8)])
	case h.Inputs == 0 || h.Outputs == 0:
		return h, fmt.Errorf("its header declares %d inputs and %d outputs, a compiled graph has at least one of each", h.Inputs, h.Outputs)
	case h.DataLen == 0 || int64(h.DataLen) != blobSize-NeuronHeaderSize:
		return h, fmt.Errorf("its header declares a %d-byte compiled network, the blob holds %d bytes after the header", h.DataLen, blobSize-NeuronHeaderSize)
	}
	return h, nil
}
