package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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

// BenchmarkConvertMemory runs convert.py directly and samples /proc/<pid>/status, to split
// the peak RSS into anonymous memory (what conversion allocates) and file-backed pages
// (the mmap'd shards, page cache the kernel can drop).
func BenchmarkConvertMemory(b *testing.B) {
	for _, family := range []string{"qwen3", "llama"} {
		b.Run(family, func(b *testing.B) {
			py := torchPython(b)
			root := b.TempDir()
			if err := os.Mkdir(filepath.Join(root, family), 0o755); err != nil {
				b.Fatal(err)
			}
			pyJSON(b, py, nil, filepath.Join("testdata", "bench_model.py"), "model", family, filepath.Join(root, family))
			plan, _ := tinyPlan(b, root, family, "consolidated.pth")
			if err := os.MkdirAll(filepath.Dir(plan.Output), 0o755); err != nil {
				b.Fatal(err)
			}
			scripts, err := WriteScripts(filepath.Join(root, "drivers"))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := json.Marshal(plan)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(py, scripts[0])
				cmd.Stdin = bytes.NewReader(body)
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				var anon, file int64
				status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
			sample:
				for {
					select {
					case err := <-done:
						if err != nil {
							b.Fatal(err)
						}
						break sample
					case <-time.After(20 * time.Millisecond):
						a, f := rssSplit(status)
						anon, file = max(anon, a), max(file, f)
					}
				}
				b.ReportMetric(float64(anon)/1e6, "peakAnon-MB")
				b.ReportMetric(float64(file)/1e6, "peakFile-MB")
			}
		})
	}
}

// rssSplit reads RssAnon and RssFile (bytes) from a /proc status file.
func rssSplit(path string) (anon, file int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "RssAnon: %d kB", &kb); err == nil {
			anon = kb << 10
		}
		if _, err := fmt.Sscanf(line, "RssFile: %d kB", &kb); err == nil {
			file = kb << 10
		}
	}
	return anon, file
}
