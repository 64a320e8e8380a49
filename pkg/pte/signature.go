package pte

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Blob signatures of the backends whose payload format is known.
const (
	SigXNNPACK = "XH00"
	SigVulkan  = "VH00"
	SigQNN     = "QNN"
	SigEmpty   = "empty"
)

// qnnMagic is the little-endian u32 0x5678ABCD that starts a QNN context blob.
var qnnMagic = []byte{0xcd, 0xab, 0x78, 0x56}

// Signature names the payload format from a blob's first bytes: XH00 (XNNPACK header),
// VH00 (Vulkan header), QNN (context magic), or "unknown <hex>" for anything else, so a
// stand-in or a truncated blob shows up in inspect output. (NEURON needs the delegate id
// and the blob size as well; Open sets it.)
func Signature(head []byte) string {
	switch {
	case len(head) == 0:
		return SigEmpty
	case len(head) >= 8 && string(head[4:8]) == SigXNNPACK:
		return SigXNNPACK
	case len(head) >= 8 && string(head[4:8]) == SigVulkan:
		return SigVulkan
	case bytes.HasPrefix(head, qnnMagic):
		return SigQNN
	}
	return "unknown " + hex.EncodeToString(head[:min(len(head), 8)])
}

// headSize is how many bytes of each delegate blob Open reads: enough for every known
// header (XNNPACK's and Vulkan's magic at 4..8, the 13-byte NeuronPayloadHeader).
const headSize = 16

// readSignatures reads the first bytes of each delegate blob, once per distinct blob, and
// names its format. A NeuropilotBackend blob has no magic; its header is recognised when it
// agrees with the blob's size (ParseNeuronHeader).
func (p *Program) readSignatures(r io.ReaderAt, prog []byte) error {
	type seenBlob struct {
		head []byte
		sig  string
	}
	seen := map[[2]int64]seenBlob{}
	for mi := range p.Methods {
		for di := range p.Methods[mi].Delegates {
			d := &p.Methods[mi].Delegates[di]
			key := [2]int64{d.BlobOffset, d.BlobSize}
			if s, ok := seen[key]; ok {
				d.Head, d.Signature = s.head, s.sig
				continue
			}
			head, err := blobHead(r, prog, d)
			if err != nil {
				return fmt.Errorf("method %q delegate %s blob: %w", p.Methods[mi].Name, d.ID, err)
			}
			d.Head, d.Signature = head, Signature(head)
			if _, err := ParseNeuronHeader(head, d.BlobSize); err == nil && d.ID == NeuropilotBackend {
				d.Signature = SigNeuron
			}
			seen[key] = seenBlob{d.Head, d.Signature}
		}
	}
	return nil
}

func blobHead(r io.ReaderAt, prog []byte, d *Delegate) ([]byte, error) {
	n := min(d.BlobSize, headSize)
	if d.Location == Inline {
		return slices.Clone(prog[d.BlobOffset : d.BlobOffset+n]), nil
	}
	head := make([]byte, n)
	if _, err := r.ReadAt(head, d.BlobOffset); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head, nil
}
