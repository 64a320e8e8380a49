package drivers

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkConvert converts a 1.2 GB bf16 checkpoint with Qwen3-0.6B's shapes. qwen3 maps
// tensors as they are; llama un-permutes q and k (copies). Reported: the driver's wall
// time, throughput and peak RSS (file-backed mmap pages included).
func BenchmarkConvert(b *testing.B) {
	for _, family := range []string{"qwen3", "llama"} {
		b.Run(family, func(b *testing.B) {
			py := torchPython(b)
			root := b.TempDir()
			if err := os.Mkdir(filepath.Join(root, family), 0o755); err != nil {
				b.Fatal(err)
			}
			pyJSON(b, py, nil, filepath.Join("testdata", "bench_model.py"), "model", family, filepath.Join(root, family))
			plan, _ := tinyPlan(b, root, family, "consolidated.pth")
			in := fileSizes(b, plan.Shards...)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := Runner{Python: py}.Convert(context.Background(), plan)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(res.Process.Seconds, "driver-s")
				b.ReportMetric(float64(in)/res.Process.Seconds/1e6, "MB/s")
				b.ReportMetric(float64(res.Process.PeakRSSBytes)/1e6, "peakRSS-MB")
			}
			b.ReportMetric(float64(in)/1e6, "input-MB")
		})
	}
}

// BenchmarkGPTQ solves one linear of Qwen3-0.6B's shapes (down_proj [1024, 3072], gate
// [3072, 1024]) from 2048 tokens of activations.
func BenchmarkGPTQ(b *testing.B) {
	for _, shape := range [][2]int{{1024, 3072}, {3072, 1024}} {
		b.Run(strconv.Itoa(shape[0])+"x"+strconv.Itoa(shape[1]), func(b *testing.B) {
			py := torchPython(b)
			dir := b.TempDir()
			pyJSON(b, py, nil, filepath.Join("testdata", "bench_model.py"), "linear", dir,
				strconv.Itoa(shape[0]), strconv.Itoa(shape[1]), "2048")
			plan := NewGPTQ(filepath.Join(dir, "codes.pt"), []Linear{{Name: "l",
				Weight: filepath.Join(dir, "weight.pt"), Activations: filepath.Join(dir, "activations.pt")}})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := Runner{Python: py}.GPTQ(context.Background(), plan)
				if err != nil {
					b.Fatal(err)
				}
				st := res.Linears[0]
				b.ReportMetric(st.Seconds, "solve-s")
				b.ReportMetric(res.Process.Seconds, "driver-s")
				b.ReportMetric(float64(res.Process.PeakRSSBytes)/1e6, "peakRSS-MB")
				b.ReportMetric(st.RelativeGPTQ/st.RelativeRTN, "err-ratio")
			}
		})
	}
}
