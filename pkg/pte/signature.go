package pte

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
// stand-in or a truncated blob shows up in inspect output.
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

// readSignatures reads the first 16 bytes of each delegate blob, once per distinct blob.
func (p *Program) readSignatures(r io.ReaderAt, prog []byte) error {
	seen := map[[2]int64]string{}
	for mi := range p.Methods {
		for di := range p.Methods[mi].Delegates {
			d := &p.Methods[mi].Delegates[di]
			key := [2]int64{d.BlobOffset, d.BlobSize}
			if sig, ok := seen[key]; ok {
				d.Signature = sig
				continue
			}
			head, err := blobHead(r, prog, d)
			if err != nil {
				return fmt.Errorf("method %q delegate %s blob: %w", p.Methods[mi].Name, d.ID, err)
			}
			d.Signature = Signature(head)
			seen[key] = d.Signature
		}
	}
	return nil
}

func blobHead(r io.ReaderAt, prog []byte, d *Delegate) ([]byte, error) {
	n := min(d.BlobSize, 16)
	if d.Location == Inline {
		return prog[d.BlobOffset : d.BlobOffset+n], nil
	}
	head := make([]byte, n)
	if _, err := r.ReadAt(head, d.BlobOffset); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head, nil
}
