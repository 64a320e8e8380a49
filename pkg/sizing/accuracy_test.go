package sizing_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/sizing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// measured is every export the reference implementation measured
// (docs/research/sizing.md#measured-exports) and every size on the two published model
// cards (docs/research/sizing.md#published-model-cards). A size published as "2.66 GB" is
// known to ±0.005 GB: lo and hi bound it; exact measurements have lo == hi.
type measured struct {
	what    string
	id      string
	backend string // xnnpack, xnnpack-fp32, vulkan, qnn, mediatek-A16W4, mediatek-A16W8
	window  int
	kind    string // pte, chunk, last-chunk, peak
	lo, hi  int64
	source  string
}

const gib = 1 << 30

func gb(v float64) (int64, int64) { return int64((v - 0.005) * 1e9), int64((v + 0.005) * 1e9) }

func exact(v int64) (int64, int64) { return v, v }

func gibRounded(v float64) (int64, int64) {
	return int64((v - 0.05) * gib), int64((v + 0.05) * gib)
}

func row(what, id, backend string, w int, kind string, lohi func() (int64, int64), src string) measured {
	lo, hi := lohi()
	return measured{what, id, backend, w, kind, lo, hi, src}
}

func measurements() []measured {
	e := func(v int64) func() (int64, int64) { return func() (int64, int64) { return exact(v) } }
	g := func(v float64) func() (int64, int64) { return func() (int64, int64) { return gb(v) } }
	gi := func(v float64) func() (int64, int64) { return func() (int64, int64) { return gibRounded(v) } }
	q06, q17, q4 := "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B"
	s360, s135 := "HuggingFaceTB/SmolLM2-360M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct"
	out := []measured{
		row("Qwen3-0.6B 8da4w", q06, "xnnpack", 2048, "pte", e(496_570_368), "sizing.md measured"),
		row("Qwen3-0.6B 8da4w", q06, "xnnpack", 16384, "pte", e(525_932_032), "sizing.md measured"),
		row("SmolLM2-135M 8da4w", s135, "xnnpack", 2048, "pte", e(106_018_048), "sizing.md measured"),
		row("SmolLM2-360M fp32", s360, "xnnpack-fp32", 2048, "pte", e(1_496_334_720), "sizing.md measured"),
	}
	for i, w := range []int{4096, 8192, 16384, 32768} {
		out = append(out, row("SmolLM2-360M fp32", s360, "xnnpack-fp32", w, "pte", g([]float64{1.50, 1.50, 1.50, 1.51}[i]), "sizing.md cards"))
	}
	for i, w := range []int{2048, 4096, 8192, 16384, 32768} {
		out = append(out, row("Qwen3-4B 8da4w-gptq", q4, "xnnpack", w, "pte", g([]float64{2.66, 2.66, 2.67, 2.69, 2.72}[i]), "sizing.md cards"))
		out = append(out, row("Qwen3-4B 8da4w", q4, "vulkan", w, "pte", g([]float64{3.42, 3.43, 3.46, 3.51, 3.61}[i]), "sizing.md cards"))
		out = append(out, row("SmolLM2-360M 8da4w", s360, "vulkan", w, "pte", g([]float64{0.32, 0.33, 0.33, 0.35, 0.38}[i]), "sizing.md cards"))
	}
	out = append(out,
		row("Qwen3-0.6B 8da4w", q06, "vulkan", 2048, "pte", func() (int64, int64) { return 615_500_000, 616_500_000 }, "sizing.md measured (616 MB)"),
		row("Qwen3-0.6B SM8650", q06, "qnn", 2048, "pte", e(665_070_592), "sizing.md measured"),
		row("Qwen3-0.6B SM8750", q06, "qnn", 2048, "pte", e(664_296_448), "sizing.md measured"),
		row("Qwen3-0.6B SM8750", q06, "qnn", 4096, "pte", e(686_009_344), "sizing.md measured"),
		row("Qwen3-0.6B MT6991 A16W4", q06, "mediatek-A16W4", 512, "chunk", e(86_052_736), "sizing.md measured"),
		row("Qwen3-0.6B MT6991 A16W4", q06, "mediatek-A16W4", 512, "last-chunk", e(165_214_720), "sizing.md measured"),
		row("Qwen3-0.6B MT6989 A16W4", q06, "mediatek-A16W4", 512, "chunk", e(86_257_152), "sizing.md measured"),
		row("Qwen3-0.6B MT6989 A16W4", q06, "mediatek-A16W4", 512, "last-chunk", e(165_419_008), "sizing.md measured"),
	)
	for _, w := range []int{2048, 4096} {
		out = append(out,
			row("Qwen3-4B MT6991 A16W8", q4, "mediatek-A16W8", w, "chunk", g(1.10), "sizing.md cards"),
			row("Qwen3-4B MT6991 A16W8", q4, "mediatek-A16W8", w, "last-chunk", g(1.49), "sizing.md cards"))
	}
	for i, w := range []int{2048, 4096, 8192, 16384} {
		out = append(out,
			row("SmolLM2-360M MT6991 A16W8", s360, "mediatek-A16W8", w, "chunk", g([]float64{0.09, 0.09, 0.10, 0.10}[i]), "sizing.md cards"),
			row("SmolLM2-360M MT6991 A16W8", s360, "mediatek-A16W8", w, "last-chunk", g(0.14), "sizing.md cards"))
	}
	// measured export peaks: the host need must never be below them
	out = append(out,
		row("Qwen3-0.6B peak RSS", q06, "xnnpack", 2048, "peak", e(5_836_587_008), "sizing.md measured"),
		row("Qwen3-0.6B peak RSS", q06, "xnnpack", 16384, "peak", e(15_781_117_952), "sizing.md measured"),
		row("SmolLM2-135M peak RSS", s135, "xnnpack", 2048, "peak", e(2_748_440_576), "sizing.md measured"),
		row("Qwen3-1.7B measured", q17, "xnnpack", 16384, "peak", gi(34.7), "sizing.md measured"),
		row("Qwen3-1.7B killed at 46.5 GiB", q17, "xnnpack", 32768, "peak", gi(46.5), "sizing.md measured (runs 35413952925, 35420508341)"),
		row("Qwen3-0.6B", q06, "vulkan", 16384, "peak", gi(24.2), "sizing.md measured"),
		row("Qwen3-0.6B", q06, "vulkan", 32768, "peak", gi(80.1), "sizing.md measured"),
		row("Qwen3-1.7B", q17, "vulkan", 32768, "peak", gi(86.4), "sizing.md measured"),
		row("Qwen3-4B", q4, "vulkan", 2048, "peak", gi(16.9), "sizing.md measured"),
		row("Qwen3-4B", q4, "vulkan", 32768, "peak", gi(115.5), "sizing.md measured"),
		row("Qwen2.5-Math-1.5B (Qwen2.5-1.5B architecture)", "Qwen/Qwen2.5-1.5B", "vulkan", 32768, "peak", gi(82.4), "sizing.md measured"),
		row("Qwen3-0.6B SM8650", q06, "qnn", 2048, "peak", e(15_657_545_728), "sizing.md measured"),
		row("Qwen3-0.6B SM8750", q06, "qnn", 2048, "peak", e(15_644_954_624), "sizing.md measured"),
		row("Qwen3-0.6B SM8750", q06, "qnn", 4096, "peak", e(15_702_085_632), "sizing.md measured"),
		row("LFM2.5-1.2B lowering", "LiquidAI/LFM2.5-1.2B-Base", "mediatek-stream", 512, "peak", g(18.4), "sizing.md measured"),
		row("LFM2.5-1.2B lowering", "LiquidAI/LFM2.5-1.2B-Base", "mediatek-stream", 4096, "peak", g(17.8), "sizing.md measured"),
		row("LFM2.5-1.2B-heretic 8 chunks", "LiquidAI/LFM2.5-1.2B-Base", "mediatek-stream", 16384, "peak", e(14_361_923_584), "sizing.md measured"),
	)
	return out
}

func estimate(t *testing.T, m measured) int64 {
	s := sized(t, m.id)
	var v int64
	var err error
	switch m.backend + "/" + m.kind {
	case "xnnpack/pte":
		v, err = s.PTEBytesXNNPACK("8da4w", m.window)
	case "xnnpack-fp32/pte":
		v, err = s.PTEBytesXNNPACK("fp32", m.window)
	case "vulkan/pte":
		v, err = s.PTEBytesVulkan("8da4w", m.window)
	case "qnn/pte":
		v = s.PTEBytesQNN(m.window)
	case "mediatek-A16W4/chunk", "mediatek-A16W8/chunk", "mediatek-A16W4/last-chunk", "mediatek-A16W8/last-chunk":
		f := mtk(t, s, strings.TrimPrefix(m.backend, "mediatek-"), 4, m.window)
		v = f.Chunks[0]
		if m.kind == "last-chunk" {
			v = f.Chunks[3]
		}
	case "xnnpack/peak":
		v = s.HostNeedXNNPACK(m.window)
	case "vulkan/peak":
		v = s.HostNeedVulkan(m.window)
	case "qnn/peak":
		v = s.HostNeedQNN(m.window)
	case "mediatek-stream/peak":
		v = s.MediaTekNeed(m.window, 9, 128, 14, true).CalibrationBytes
	default:
		t.Fatalf("no estimate for %s/%s", m.backend, m.kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAccuracy checks the promises: every measured file within its backend's measured error
// (sizing.PTEError*, over the whole rounding interval of a card's size; the size check
// fails a .pte further off), no host need below a measured peak; and renders the table
// docs/benchmarks.md carries.
func TestAccuracy(t *testing.T) {
	var b strings.Builder
	fmt.Fprintln(&b, "| export | backend | window | what | estimate (B) | measured (B) | estimate / measured | source |")
	fmt.Fprintln(&b, "|---|---|---|---|---:|---:|---:|---|")
	for _, m := range measurements() {
		est := estimate(t, m)
		mid := (m.lo + m.hi) / 2
		worst := max(abs(float64(est)/float64(m.lo)-1), abs(float64(est)/float64(m.hi)-1))
		switch {
		case m.kind == "peak" && est < m.hi:
			t.Errorf("%s %s at %d: host need %d is below the measured peak %d", m.what, m.backend, m.window, est, m.hi)
		case m.kind != "peak" && worst > pteError(t, m.backend):
			t.Errorf("%s %s at %d: estimate %d is %.2f%% off %d..%d, more than the backend's %.0f%%", m.what, m.backend, m.window, est, 100*worst, m.lo, m.hi, 100*pteError(t, m.backend))
		}
		measuredText := fmt.Sprintf("%d", mid)
		if m.lo != m.hi {
			measuredText = fmt.Sprintf("%d ± %d", mid, (m.hi-m.lo)/2)
		}
		what := m.kind
		if m.kind == "peak" {
			what = "host need vs peak"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %d | %s | %.3f | %s |\n", m.what, m.backend, m.window, what, est, measuredText, float64(est)/float64(mid), m.source)
	}
	golden := filepath.Join("testdata", "accuracy.md")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/sizing -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("accuracy table changed; run go test ./pkg/sizing -update and copy it to docs/benchmarks.md\n%s", b.String())
	}
}

// pteError is the measured error a backend's files are held to (sizing.PTEError*).
func pteError(t *testing.T, backend string) float64 {
	switch {
	case strings.HasPrefix(backend, "xnnpack"):
		return sizing.PTEErrorXNNPACK
	case backend == "vulkan":
		return sizing.PTEErrorVulkan
	case backend == "qnn":
		return sizing.PTEErrorQNN
	case strings.HasPrefix(backend, "mediatek"):
		return sizing.PTEErrorMediaTek
	}
	t.Fatalf("no measured error for %s", backend)
	return 0
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestBenchmarksDocCarriesTable keeps docs/benchmarks.md true: it must hold the table
// the code computes today.
func TestBenchmarksDocCarriesTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join("testdata", "accuracy.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), string(table)) {
		t.Error("docs/benchmarks.md lacks the current accuracy table: run docs/assemble-benchmarks.sh")
	}
}
