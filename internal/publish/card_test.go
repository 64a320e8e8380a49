package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/golden"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// seedModel is what the reports of a published repo held, as far as its card shows it:
// the windows per backend with each file's size in bytes, the KV cache per token, the
// recipes and the runs. The two seed cards in testdata/seeds were built from such reports.
type seedModel struct {
	id, sha, tokenizer string
	kvPerToken         int64
	licenseFiles       []string
	backends           []seedBackend
}

type seedBackend struct {
	backend, chip, chipName, stem string
	run                           string
	windows                       []int
	// sizes are per window: one size for a single program, the chunks' for MediaTek.
	sizes [][]int64
	desc  func(window int) string
}

// gb is a size as the card prints it (two decimals) plus bytes that do not change that.
func gb(hundredths int64) int64 { return hundredths*10_000_000 + 1_234_567 }

func gbs(h ...int64) []int64 {
	out := make([]int64, len(h))
	for i, x := range h {
		out[i] = gb(x)
	}
	return out
}

const (
	xnnDesc    = "ExecuTorch 1.4.0 `export_llm`: %s, int8 per-channel embeddings, XNNPACK with extended ops, prefill chunk 2048, fp32 KV cache."
	vulkanDesc = "ExecuTorch 1.4.0 `export_llm`: 8-bit dynamic activations and 4-bit weights in groups of 32, int8 per-channel embeddings, the Vulkan delegate, prefill chunk 2048, fp32 KV cache."
	mtkDesc    = "ExecuTorch 1.4.0 MediaTek LLM export (`examples/mediatek`, `%s`): A16W8 (16-bit activations, 8-bit weights) calibrated on MediaTek's `alpaca.txt` prompts (9 of 9) in the %s chat template, cut into 4 chunks, with a 128-token prompt graph and a one-token generation graph over a %d-token cache, compiled with MediaTek NeuroPilot Express SDK (mtk_converter 8.13.0+public, mtk_neuron 8.2.23) for MT6991 (Dimensity 9400)."
	runURL     = "https://github.com/ExperimentalMachines/execupack/actions/runs/"
)

var windows5 = []int{2048, 4096, 8192, 16384, 32768}

var seedModels = map[string]seedModel{
	"SmolLM2-360M-Instruct": {id: "HuggingFaceTB/SmolLM2-360M-Instruct", sha: "a10cc1512eab", tokenizer: "tokenizer.json", kvPerToken: 81920,
		backends: []seedBackend{
			{backend: "xnnpack", stem: "SmolLM2-360M-Instruct-fp32-", run: "37160993875", windows: windows5,
				sizes: [][]int64{gbs(150), gbs(150), gbs(150), gbs(150), gbs(151)},
				desc: func(int) string {
					return fmt.Sprintf(xnnDesc, "fp32 weights and activations in every linear (not quantized)")
				}},
			{backend: "vulkan", stem: "SmolLM2-360M-Instruct-vulkan-8da4w-", run: "37157383005", windows: windows5,
				sizes: [][]int64{gbs(32), gbs(33), gbs(33), gbs(35), gbs(38)},
				desc:  func(int) string { return vulkanDesc }},
			{backend: "mediatek", chip: "MT6991", chipName: "Dimensity 9400", stem: "SmolLM2-360M-Instruct-neuropilot-a16w8-", run: "37158194354",
				windows: []int{2048, 4096, 8192, 16384},
				sizes:   [][]int64{gbs(9, 9, 9, 14), gbs(9, 9, 9, 14), gbs(10, 10, 10, 14), gbs(10, 10, 10, 14)},
				desc:    func(w int) string { return fmt.Sprintf(mtkDesc, "llama.py", "qwen.json", w) }},
		}},
	"Qwen3-4B": {id: "Qwen/Qwen3-4B", sha: "1cfa9a720891", tokenizer: "tokenizer.json", kvPerToken: 294912, licenseFiles: []string{"LICENSE"},
		backends: []seedBackend{
			{backend: "xnnpack", stem: "Qwen3-4B-8da4w-gptq-", run: "1", windows: windows5,
				sizes: [][]int64{gbs(266), gbs(266), gbs(267), gbs(269), gbs(272)},
				desc: func(int) string {
					return fmt.Sprintf(xnnDesc, "8-bit dynamic activations and 4-bit weights in groups of 32")
				}},
			{backend: "vulkan", stem: "Qwen3-4B-vulkan-8da4w-", run: "2", windows: windows5,
				sizes: [][]int64{gbs(342), gbs(343), gbs(346), gbs(351), gbs(361)},
				desc:  func(int) string { return vulkanDesc }},
			{backend: "mediatek", chip: "MT6991", chipName: "Dimensity 9400", stem: "Qwen3-4B-neuropilot-a16w8-", run: "3",
				windows: []int{2048, 4096},
				sizes:   [][]int64{gbs(110, 110, 110, 149), gbs(110, 110, 110, 149)},
				desc:    func(w int) string { return fmt.Sprintf(mtkDesc, "qwen.py", "qwen3.json", w) }},
		}},
}

// reports builds the seed model's reports, placed where publish puts them.
func (m seedModel) reports() []placed {
	var out []placed
	name := m.id[strings.LastIndex(m.id, "/")+1:]
	for _, b := range m.backends {
		for i, w := range b.windows {
			l := family.WindowLabel(w)
			folder := b.backend
			r := &report.Report{Backend: b.backend, Target: anyTarget, Tokenizer: m.tokenizer,
				Source:    report.Source{ID: m.id, SHA: m.sha + "0000000000000000000000000000", License: report.License{License: "apache-2.0"}, LicenseFiles: m.licenseFiles},
				Toolchain: map[string]string{"executorch": "1.4.0"},
				Recipe:    map[string]any{"label": "test", "description": b.desc(w)},
				Window:    report.Window{Context: w, PhoneBudgetBytes: 5_000_000_000},
				Run:       &report.Run{URL: runURL + b.run, ID: b.run}}
			if b.chip != "" {
				folder = "mtk/" + strings.ToLower(b.chip)
				r.Target, r.TargetName = b.chip, b.chipName
				r.Toolchain["neuropilot_sdk"], r.Toolchain["mtk_converter"], r.Toolchain["mtk_neuron"] = "8.0.8-build20250925", "8.13.0+public", "8.2.23"
			} else {
				kv := m.kvPerToken
				r.Window.KVBytesPerToken = &kv
			}
			if b.backend == "xnnpack" {
				r.Smoke = &smoke.Result{Passed: true, Reply: "Paris.", Answered: true}
			}
			for c, size := range b.sizes[i] {
				file := b.stem + l + ".pte"
				if len(b.sizes[i]) > 1 {
					file = fmt.Sprintf("%s%s-chunk%dof%d.pte", b.stem, l, c+1, len(b.sizes[i]))
				}
				r.Files = append(r.Files, report.File{Path: folder + "/" + file, Bytes: size})
				r.StructuralCheck = append(r.StructuralCheck, check.Result{Passed: true})
			}
			if b.chip != "" {
				r.Files = append(r.Files, report.File{Path: folder + "/" + name + "-neuropilot-embedding-fp32.bin", Bytes: 1})
			}
			out = append(out, placed{Path: folder + "/" + report.Name(l), Report: r})
		}
	}
	return out
}

// Patterns of the seed cards' content, in both of their forms (markdown source, and text
// copied from the rendered page).
var (
	rowRe     = regexp.MustCompile("(XNNPACK \\(CPU\\)|Vulkan \\(GPU\\)|MediaTek NeuroPilot)(?: \\| )?(any arm64|MT\\d+ \\([^)]+\\))(?: \\| )?\\[?`([^`]+)`(?:\\]\\([^)]*\\))?(?: \\| )?([\\d,]+) tokens(?: \\| )?([\\d.]+ GB)(?: \\| )?(passed \\(\"Paris\"\\)|structure checked \\(no host NPU runtime\\))")
	memoryRe  = regexp.MustCompile(`(XNNPACK \(CPU\)|Vulkan \(GPU\)) at ([\d,]+) tokens: the KV cache costs ([\d,]+) bytes per token \(fp32\), ([\d,]+) bytes for the whole window`)
	windowsRe = regexp.MustCompile(`Windows in this repo: ([^.]+)\.`)
)

// TestCardReproducesSeedCards builds the card of the two published repos from their
// reports: it is held to a golden file, and its files table (backend, target, file,
// window, size), memory lines and windows reproduce the seed cards'.
func TestCardReproducesSeedCards(t *testing.T) {
	for name, m := range seedModels {
		t.Run(name, func(t *testing.T) {
			card := Card(m.reports())
			golden.Check(t, filepath.Join("testdata", "card-"+name+".md"), []byte(card))

			seed, err := os.ReadFile(filepath.Join("testdata", "seeds", "card-"+name+".txt"))
			require.NoError(t, err)
			for _, re := range []*regexp.Regexp{rowRe, memoryRe, windowsRe} {
				wantRows, gotRows := re.FindAllStringSubmatch(string(seed), -1), re.FindAllStringSubmatch(card, -1)
				require.NotEmpty(t, wantRows, re.String())
				assert.Equal(t, groups(wantRows), groups(gotRows), re.String())
			}
			assert.Contains(t, card, "base_model_relation: quantized\nlibrary_name: executorch\npipeline_tag: text-generation\n")
			assert.Contains(t, card, "MediaTek folders also hold the token embedding table the NeuroPilot runner reads from disk, shared by every window: [`mtk/mt6991/"+name+"-neuropilot-embedding-fp32.bin`]")
			license := "distributed under the same terms (apache-2.0)."
			if len(m.licenseFiles) > 0 {
				license += " The upstream license files are included unchanged: [`LICENSE`](LICENSE)."
			}
			assert.Contains(t, card, license+"\n")
			assert.Contains(t, card, "compiled with the MediaTek NeuroPilot Express SDK 8.0.8-build20250925 (mtk_converter 8.13.0+public, mtk_neuron 8.2.23) from MediaTek Inc.")
		})
	}
}

func groups(ms [][]string) [][]string {
	out := make([][]string, len(ms))
	for i, m := range ms {
		out[i] = m[1:]
	}
	return out
}

// TestCardSaysWhichRuntimesLoad: the card names, for each ExecuTorch release its files were
// made with, the runtimes that load them without a warning; a repo caught mid-move (an old
// folder beside a rebuilt one) names both.
func TestCardSaysWhichRuntimesLoad(t *testing.T) {
	rs := seedModels["SmolLM2-360M-Instruct"].reports()
	assert.Contains(t, Card(rs), "any ExecuTorch runtime that loads them: made with ExecuTorch 1.4.0, they load on 1.4.0 to 1.5.x.\n")
	for _, p := range rs {
		p.Report.Toolchain = map[string]string{"executorch": "1.5.1"}
	}
	assert.Contains(t, Card(rs), "made with ExecuTorch 1.5.1, they load on 1.5.1 to 1.6.x.\n")
	rs[0].Report.Toolchain = map[string]string{"executorch": "1.4.0"}
	assert.Contains(t, Card(rs), "made with ExecuTorch 1.4.0, they load on 1.4.0 to 1.5.x; made with ExecuTorch 1.5.1, they load on 1.5.1 to 1.6.x.\n")
}
