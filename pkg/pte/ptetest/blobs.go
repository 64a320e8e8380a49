package ptetest

import (
	"encoding/binary"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// QNNBlob is a blob that starts with the QNN context magic 0x5678ABCD.
func QNNBlob(size int64) Blob {
	h := []byte{0xcd, 0xab, 0x78, 0x56, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(h[4:], uint32(min(size, 1<<31)))
	return Blob{Head: h, Size: max(size, int64(len(h)))}
}

// NeuropilotBlob is a blob laid out like NeuropilotBackend's payload: the 13-byte
// NeuronPayloadHeader (version 1, one input, one output, as the built method's delegate
// call passes, and the network's length) and a "compiled network" that is the text
// ptetest-neuropilot followed by zeros, so a hex dump shows it was never compiled.
func NeuropilotBlob(size int64) Blob {
	const marker = "ptetest-neuropilot"
	size = max(size, int64(pte.NeuronHeaderSize+len(marker)))
	h := NeuronHeader(1, 1, 1, uint32(min(size-pte.NeuronHeaderSize, 1<<32-1)))
	return Blob{Head: append(h, marker...), Size: size}
}

// NeuronHeader lays out a NeuronPayloadHeader as ExecuTorch's preprocess.py packs it
// ("<BIII": version, inputs, outputs, the compiled network's length).
func NeuronHeader(version byte, inputs, outputs, dataLen uint32) []byte {
	h := make([]byte, pte.NeuronHeaderSize)
	h[0] = version
	binary.LittleEndian.PutUint32(h[1:], inputs)
	binary.LittleEndian.PutUint32(h[5:], outputs)
	binary.LittleEndian.PutUint32(h[9:], dataLen)
	return h
}
