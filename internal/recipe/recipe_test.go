package recipe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // the builders under test are the backends' own
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/golden"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
)

func source(t *testing.T, id string) *model.Source {
	t.Helper()
	s, err := snapshot.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// request is one export of id as the export command makes it: the source with the verdict
// backend.Evaluate gave it.
func request(t *testing.T, id, name string, window int, soc string) recipe.Request {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	src := source(t, id)
	return recipe.Request{
		Backend: name, Source: src, Verdict: backend.Evaluate(cfg, src), Window: window, SoC: soc,
		Work: "/work/export", SourceDir: "/work/export/source", Python: "/venv/bin/python",
		MTKPython: "/opt/mtk-venv/bin/python", ExecuTorch: "/opt/executorch",
	}
}

var cases = []struct {
	name, id, backend string
	window            int
	soc, codes, qmode string
	// calibration and calibrationOut are the QNN shared calibration's file to build from,
	// and the file a calibrate-only export writes.
	calibration, calibrationOut string
}{
	{"qwen3-xnnpack-8k", "Qwen/Qwen3-1.7B", "xnnpack", 8192, "", "", "", "", ""},
	{"qwen3-xnnpack-gptq-4k", "Qwen/Qwen3-4B", "xnnpack", 4096, "", "/work/codes.pt", "", "", ""},
	{"qwen3-vulkan-4k", "Qwen/Qwen3-1.7B", "vulkan", 4096, "", "", "", "", ""},
	{"qwen2.5-xnnpack-2k", "Qwen/Qwen2.5-0.5B-Instruct", "xnnpack", 2048, "", "", "", "", ""},
	{"llama3.2-xnnpack-32k", "meta-llama/Llama-3.2-1B-Instruct", "xnnpack", 32768, "", "", "", "", ""},
	{"smollm2-xnnpack-fp32-8k", "HuggingFaceTB/SmolLM2-360M-Instruct", "xnnpack", 8192, "", "", "fp32", "", ""},
	{"lfm2.5-xnnpack-16k", "LiquidAI/LFM2.5-1.2B-Base", "xnnpack", 16384, "", "", "", "", ""},
	{"phi4mini-xnnpack-4k", "microsoft/Phi-4-mini-instruct", "xnnpack", 4096, "", "", "", "", ""},
	{"gemma3-xnnpack-4k", "google/gemma-3-1b-it", "xnnpack", 4096, "", "", "", "", ""},
	{"smollm3-xnnpack-fp32-2k", "HuggingFaceTB/SmolLM3-3B", "xnnpack", 2048, "", "", "fp32", "", ""},
	{"qwen3-qnn-sm8750-4k", "Qwen/Qwen3-0.6B", "qnn", 4096, "SM8750", "", "", "", ""},
	{"llama3.2-qnn-sm8650-2k", "meta-llama/Llama-3.2-1B-Instruct", "qnn", 2048, "SM8650", "", "", "", ""},
	{"qwen3-mediatek-mt6991-2k", "Qwen/Qwen3-0.6B", "mediatek", 2048, "MT6991", "", "", "", ""},
	{"smollm2-mediatek-mt6989-512", "HuggingFaceTB/SmolLM2-135M-Instruct", "mediatek", 512, "MT6989", "", "", "", ""},
	{"lfm2.5-mediatek-mt6991-512", "LiquidAI/LFM2.5-1.2B-Base", "mediatek", 512, "MT6991", "", "", "", ""},
	{"qwen3-qnn-sm8750-calibrate-2k", "Qwen/Qwen3-0.6B", "qnn", 2048, "SM8750", "", "", "", "/work/calibration/qnn-calibration.pt"},
	{"qwen3-qnn-sm8750-calibrated-8k", "Qwen/Qwen3-0.6B", "qnn", 8192, "SM8750", "", "", "/work/calibration/qnn-calibration.pt", ""},
}

// TestGolden pins every backend's files, argv, environment and outputs for real configs.
func TestGolden(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.id, tc.backend, tc.window, tc.soc)
			req.Codes, req.QMode = tc.codes, tc.qmode
			req.Calibration, req.CalibrationOut = tc.calibration, tc.calibrationOut
			r, err := backend.Build(cfg, req)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			js, _ := json.MarshalIndent(r, "", "  ")
			b.Write(js)
			b.WriteString("\n")
			names := make([]string, 0, len(r.Files))
			for n := range r.Files {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				b.WriteString("\n--- " + n + "\n")
				b.Write(r.Files[n])
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.name+".golden"), b.Bytes())
		})
	}
}

func TestRefusals(t *testing.T) {
	cfg, _ := config.Default()
	tests := []struct {
		id, backend string
		window      int
		soc, want   string
	}{
		{"Qwen/Qwen3-4B", "qnn", 2048, "SM8750", "no entry for this checkpoint"},
		{"Qwen/Qwen3-0.6B", "qnn", 64, "SM8750", "below the prefill length"},
		{"Qwen/Qwen3-0.6B", "qnn", 2048, "SM9999", "unknown Qualcomm chip"},
		{"Qwen/Qwen3-0.6B", "mediatek", 2048, "SM8750", "unknown MediaTek chip"},
		{"Qwen/Qwen3-0.6B", "mediatek", 64, "MT6991", "below the 128-token prompt graph"},
		{"Qwen/Qwen3-0.6B", "coreml", 2048, "", `no recipe for backend "coreml"`},
		{"Qwen/Qwen3-0.6B", "enn", 2048, "", `no recipe for backend "enn"`},
		{"microsoft/Phi-4-mini-instruct", "vulkan", 8192, "", "window 8,192 not built, none is above 4,096 tokens: export_llm fixes LongRoPE's factors"},
	}
	for _, tc := range tests {
		_, err := backend.Build(cfg, request(t, tc.id, tc.backend, tc.window, tc.soc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.id, tc.backend, err, tc.want)
		}
	}
	req := request(t, "Qwen/Qwen3-0.6B", "xnnpack", 2048, "")
	req.Work = "relative"
	if _, err := backend.Build(cfg, req); err == nil {
		t.Error("relative work folder accepted")
	}
	req = request(t, "Qwen/Qwen3-0.6B", "qnn", 2048, "SM8750")
	req.Calibration, req.CalibrationOut = "/work/in.pt", "/work/out.pt"
	_, err := backend.Build(cfg, req)
	require.ErrorContains(t, err, "the Qualcomm recipe either calibrates only (writing /work/out.pt) or builds from a calibration file (/work/in.pt), not both")
}

func TestAppRules(t *testing.T) {
	repo := "experimentalmachines/Qwen3-1.7B-ExecuTorch"
	if p := recipe.AppRules(repo, "xnnpack/Qwen3-1.7B-8da4w-8k.pte", "xnnpack"); len(p) != 0 {
		t.Errorf("good name refused: %q", p)
	}
	if p := recipe.AppRules(repo, "vulkan/Qwen3-1.7B-8da4w-8k.pte", "xnnpack"); len(p) != 1 || !strings.Contains(p[0], "as vulkan") {
		t.Errorf("backend mismatch: %q", p)
	}
	if p := recipe.AppRules("x/Model-XNNPACK", "xnnpack/model.pte", "xnnpack"); len(p) < 2 {
		t.Errorf("bad repo: %q", p)
	}
	if p := recipe.AppRules(repo, "mtk/mt6991/Qwen3-1.7B-neuropilot-a16w8-2k-chunk1of4.pte", "neuropilot"); len(p) != 0 {
		t.Errorf("mediatek chunk refused: %q", p)
	}
}

// TestFileRules: what a file's path adds to the repo's name is held to the app token the
// verdict read from the name, one step either side: the same token, another token, none.
func TestFileRules(t *testing.T) {
	const repo = "experimentalmachines/Qwen3-1.7B-ExecuTorch"
	tests := []struct {
		name, path, token string
		want              []string
	}{
		{"the repo's token", "xnnpack/Qwen3-1.7B-8da4w-8k.pte", "qwen3", nil},
		{"no token to hold it to", "xnnpack/Qwen3-1.7B-8da4w-8k.pte", "", nil},
		{"the stem reads as another family", "xnnpack/model.pte", "qwen25",
			[]string{"the installed name Qwen3-1.7B-ExecuTorch-xnnpack.pte reads as app family qwen3, the repo's name as qwen25"}},
		{"the stem carries an excluded word", "xnnpack/Qwen3-1.7B-VL-8k.pte", "qwen3",
			[]string{"the installed name Qwen3-1.7B-ExecuTorch-Qwen3-1.7B-VL-8k.pte reads as no app family (the app takes " + family.AppNames() + ")"}},
		{"the path reads as another backend", "vulkan/Qwen3-1.7B-8da4w-8k.pte", "qwen3",
			[]string{"the app reads the backend of vulkan/Qwen3-1.7B-8da4w-8k.pte as vulkan, not xnnpack"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, recipe.FileRules(repo, tc.path, "xnnpack", tc.token))
		})
	}
}

// TestBuildTakesTheVerdict: a recipe builds what the verdict decided, so a request without
// one, or whose verdict found no family, is refused by Build and by a builder called alone.
func TestBuildTakesTheVerdict(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	req := request(t, "Qwen/Qwen3-0.6B", "xnnpack", 2048, "")
	_, err = backend.Build(cfg, req)
	require.NoError(t, err, "the precondition: with its verdict the request builds")
	for name, v := range map[string]*family.Verdict{"no verdict": nil, "no family": {ModelID: req.Source.ID}} {
		t.Run(name, func(t *testing.T) {
			req := req
			req.Verdict = v
			_, err := backend.Build(cfg, req)
			assert.ErrorContains(t, err, "has no verdict with a family")
			_, err = backend.ByName("xnnpack").Recipe(cfg, req)
			assert.ErrorContains(t, err, "has no verdict with a family")
		})
	}
}

// TestInt8KVRecipe: with xnnpack.int8_kv_cache_from at 8k, the 8k file keeps its cache in
// int8 (export_llm's quantize_kv_cache beside the custom SDPA), says so in its name and
// fields, and the 4k file below the setting and the fp32 fallback keep it in fp32.
func TestInt8KVRecipe(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.Export.XNNPACK.Int8KVFrom = 8192
	for _, tc := range []struct {
		window      int
		qmode, name string
		kv          string
	}{
		{8192, "", "Qwen3-1.7B-8da4w-kv8-8k.pte", "int8"},
		{4096, "", "Qwen3-1.7B-8da4w-4k.pte", "fp32"},
		{8192, "fp32", "Qwen3-1.7B-fp32-8k.pte", "fp32"},
	} {
		req := request(t, "Qwen/Qwen3-1.7B", "xnnpack", tc.window, "")
		req.QMode = tc.qmode
		r, err := backend.Build(cfg, req)
		require.NoError(t, err)
		require.Len(t, r.Outputs, 1)
		assert.Equal(t, "xnnpack/"+tc.name, r.Outputs[0].To)
		assert.Equal(t, tc.kv, r.Fields["kv_cache_dtype"])
		y := string(r.Files["export_llm.yaml"])
		assert.Equal(t, tc.kv == "int8", strings.Contains(y, "  quantize_kv_cache: true\n"), y)
		assert.Contains(t, y, "  use_sdpa_with_kv_cache: true\n", "the quantized SDPA needs the custom one")
		assert.Equal(t, tc.kv == "int8", strings.Contains(r.Fields["description"].(string), "int8 KV cache"))
	}
}

// TestRequestedKVCache: the recipe builds the cache plan decided (the request's), over its
// own threshold, and refuses one export_llm cannot keep or the fp32 fallback must not.
func TestRequestedKVCache(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	for _, tc := range []struct {
		kv, qmode, name, bad string
	}{
		{"fp32", "", "Qwen3-1.7B-8da4w-8k.pte", ""},
		{"int8", "", "Qwen3-1.7B-8da4w-kv8-8k.pte", ""},
		{"int4", "", "", `KV cache "int4": export_llm keeps fp32 or int8`},
		{"int8", "fp32", "", "an int8 KV cache with the fp32 recipe"},
	} {
		req := request(t, "Qwen/Qwen3-1.7B", "xnnpack", 8192, "")
		req.KVCache, req.QMode = tc.kv, tc.qmode
		r, err := backend.Build(cfg, req)
		if tc.bad != "" {
			assert.ErrorContains(t, err, tc.bad)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, "xnnpack/"+tc.name, r.Outputs[0].To)
		assert.Equal(t, tc.kv, r.Outputs[0].Expect.KVCache, "the structural check holds the file to it")
	}
}

// TestVulkanCacheNotHeld: Vulkan's delegate keeps the KV cache on the GPU, out of the
// program's planned memory, so the structural check reads no cache there; XNNPACK's is held.
func TestVulkanCacheNotHeld(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	for _, backendName := range []string{"xnnpack", "vulkan"} {
		req := request(t, "Qwen/Qwen3-1.7B", backendName, 2048, "")
		req.KVCache = "fp32"
		r, err := backend.Build(cfg, req)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"xnnpack": "fp32", "vulkan": ""}[backendName], r.Outputs[0].Expect.KVCache, backendName)
	}
}

// TestOptimumRefusals: the optimum-executorch route builds what its task can (8da4w in groups
// of 32 or fp32, int8 per-token embeddings, an fp32 cache, no GPTQ codes) and refuses the
// rest by name; the chunk is cut to Gemma 3's sliding window, not past the window.
func TestOptimumRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*config.Config, *recipe.Request)
		want  string // "" builds
		chunk int
	}{
		{"as configured", func(*config.Config, *recipe.Request) {}, "", 512},
		{"fp32 fallback", func(_ *config.Config, r *recipe.Request) { r.QMode = "fp32" }, "", 512},
		{"a window below the sliding window", func(_ *config.Config, r *recipe.Request) { r.Window = 256 }, "", 256},
		{"fp32 cache asked", func(_ *config.Config, r *recipe.Request) { r.KVCache = "fp32" }, "", 512},
		{"int8 cache asked", func(_ *config.Config, r *recipe.Request) { r.KVCache = "int8" }, `KV cache "int8": optimum-executorch's custom cache is fp32 only`, 0},
		{"GPTQ codes", func(_ *config.Config, r *recipe.Request) { r.Codes = "/work/codes.pt" }, "GPTQ codes are injected into export_llm's model", 0},
		{"group size 64", func(c *config.Config, _ *recipe.Request) { c.Export.XNNPACK.GroupSize = 64 }, "group size 64: optimum-executorch's text-generation task quantizes in groups of 32 only", 0},
		{"group size 64 with fp32 linears", func(c *config.Config, r *recipe.Request) { c.Export.XNNPACK.GroupSize, r.QMode = 64, "fp32" }, "", 512},
		{"int4 embeddings", func(c *config.Config, _ *recipe.Request) { c.Export.XNNPACK.EmbeddingQuantize = "4,32" }, `embedding_quantize "4,32"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Default()
			require.NoError(t, err)
			req := request(t, "google/gemma-3-1b-it", "xnnpack", 4096, "")
			tc.edit(cfg, &req)
			r, err := backend.Build(cfg, req)
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.chunk, r.Fields["prefill_chunk"])
			assert.Equal(t, int64(tc.chunk), r.Outputs[0].Expect.MaxSeqLen)
		})
	}
}
