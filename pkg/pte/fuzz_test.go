package pte_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

// FuzzOpen feeds arbitrary bytes to Open, seeded with the real fixtures and one built
// program per backend shape. Open must return an error or a program whose indices are all
// valid; it must never panic.
func FuzzOpen(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.pte")
	coverage, _ := filepath.Glob("testdata/coverage/*.pte")
	for _, name := range append(files, coverage...) {
		// Seeds over 256 KiB (the 1.3 MB QNN file) would only slow every mutation down.
		if b := readFixture(f, strings.TrimPrefix(name, "testdata/")); len(b) <= 256<<10 {
			f.Add(b)
		}
	}
	for _, spec := range seedSpecs(f) {
		b, err := ptetest.Build(spec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// A looping or quadratic decode shows up as a crash with its input saved.
		tm := time.AfterFunc(10*time.Second, func() { panic("Open took over 10s") })
		defer tm.Stop()
		p, err := openBytes(b)
		if err != nil {
			return
		}
		exercise(t, p)
	})
}

// exercise touches everything a caller may index after a successful Open.
func exercise(t *testing.T, p *pte.Program) {
	_ = p.Metadata()
	_ = p.Coverages()
	for _, m := range p.Methods {
		_ = m.Backends()
		for _, c := range m.Chains {
			for _, in := range c.Instructions {
				switch in.Kind {
				case pte.InstrKernelCall:
					_ = m.Operators[in.Index]
				case pte.InstrDelegateCall:
					_ = m.Delegates[in.Index]
				}
				for _, a := range in.Args {
					_ = m.Values[a]
				}
			}
		}
		for _, o := range m.Outputs {
			_ = m.Values[o]
		}
		for _, d := range m.Delegates {
			if d.BlobOffset < 0 || d.BlobOffset+d.BlobSize > p.Size {
				t.Errorf("delegate blob %d+%d outside the %d-byte file", d.BlobOffset, d.BlobSize, p.Size)
			}
		}
	}
}

func seedSpecs(t testing.TB) []ptetest.Spec {
	md := ptetest.ExportLLMMetadata(128, 256, 1, []int64{2, 3})
	var specs []ptetest.Spec
	for _, s := range []interface {
		Spec() (ptetest.Spec, error)
	}{
		ptetest.LLM{Backend: "xnnpack", Metadata: md, WeightsSize: 256, BlobSize: 256},
		ptetest.LLM{Backend: "vulkan", Metadata: md, BlobSize: 256},
		ptetest.QNN{BlobSize: 256},
		ptetest.MediaTekChunk{Exp: "m_A16W4_2_chunks", PromptTokens: 32, Window: 128, WeightsSize: 256},
	} {
		specs = append(specs, mustSpec(t)(s.Spec()))
	}
	return specs
}
