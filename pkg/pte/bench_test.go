package pte_test

import (
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

// BenchmarkOpen inspects an export_llm-shaped XNNPACK file whose weights segment is 3 GiB
// (written sparsely), next to the same program with no weights: the cost must not depend
// on the segment size.
func BenchmarkOpen(b *testing.B) {
	for _, bc := range []struct {
		name    string
		weights int64
	}{{"small", 0}, {"3GiB", 3 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			path := b.TempDir() + "/m.pte"
			spec, err := ptetest.LLM{Backend: "xnnpack", WeightsSize: bc.weights,
				Metadata: ptetest.ExportLLMMetadata(2048, 8192, 128000, []int64{128009, 128001})}.Spec()
			if err != nil {
				b.Fatal(err)
			}
			if err := ptetest.WriteFile(path, spec); err != nil {
				b.Skipf("sparse file: %v", err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p, err := pte.OpenFile(path)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Metadata()) == 0 {
					b.Fatal("no metadata")
				}
			}
		})
	}
}

// BenchmarkOpenFixture measures the largest real fixture, read from memory.
func BenchmarkOpenFixture(b *testing.B) {
	data := readFixture(b, "arduino_keyword_spotting.pte")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openBytes(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenQNN opens the real 1.3 MB Qualcomm file from disk: 29 methods, one segment.
func BenchmarkOpenQNN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p, err := pte.OpenFile("testdata/stories260k_hybrid_llama_qnn.pte")
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Metadata()) != 27 {
			b.Fatal("metadata lost")
		}
	}
}
