package realtool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mtkResult is vendor/mtk_stage.py's last line.
type mtkResult struct {
	Stopped *struct {
		Type    string  `json:"type"`
		Message string  `json:"message"`
		Frames  [][]any `json:"frames"`
	} `json:"stopped"`
	SDKUses   []string `json:"sdk_uses"`
	Tokenizer struct {
		Vendored string `json:"vendored"`
		Served   string `json:"served"`
	} `json:"tokenizer"`
	Transformers       string `json:"transformers"`
	SpecialTokensMixin bool   `json:"special_tokens_mixin"`
}

// frame reports whether the traceback passes through function fn in a file ending in file.
func (r *mtkResult) frame(file, fn string) bool {
	for _, f := range r.Stopped.Frames {
		if len(f) == 3 && strings.HasSuffix(fmt.Sprint(f[0]), file) && fmt.Sprint(f[2]) == fn {
			return true
		}
	}
	return false
}

// TestMediaTekLFM2OverlayBuilds builds exe-expo's MediaTek recipe for the tiny LFM2.5 (MT6991,
// the plan's cache size), lays out its tree as export does, with internal/mtkoverlay's LFM2
// overlay applied to the kept ExecuTorch files (internal/recipe/testdata/executorch-v1.5.1),
// and runs the recipe's own command line, lfm2.py and all, with the real toolchain python.
// mtk_converter and mtk_neuron are stand-ins that get the imports through and raise on any
// use; MediaTek's vendored fast tokenizer, which the kept files lack and which does
// not import under transformers 5, is served by transformers' own class. The run must build
// the chunks from the safetensors, write the embedding table, prepare, calibrate on every
// prompt, convert and export each shape of the first chunk to edge, and stop at the first
// SDK call: the NeuroPilot partitioner's importer_v2.is_fx_node_supported.
func TestMediaTekLFM2OverlayBuilds(t *testing.T) {
	t.Parallel()
	py := python(t)
	model := tiny(t, "lfm2.5", replyA, 1)
	cfg, err := config.Default()
	require.NoError(t, err)
	src, err := source.OpenDir(context.Background(), model, "LiquidAI/LFM2.5-1.2B-Instruct")
	require.NoError(t, err)
	et, err := filepath.Abs(filepath.Join("..", "..", "internal", "recipe", "testdata", "executorch-v1.5.1"))
	require.NoError(t, err)
	work := t.TempDir()
	mt := cfg.Export.MediaTek
	r, err := backend.Build(cfg, recipe.Request{Backend: "mediatek", Source: src, Verdict: backend.Evaluate(cfg, src), Window: mt.CacheSize, SoC: mt.SoCs[0],
		Work: work, SourceDir: model, Python: py, MTKPython: py, ExecuTorch: et})
	require.NoError(t, err)
	require.NotNil(t, r.Prepare)
	require.Equal(t, "lfm2", r.Prepare.Overlay, "LFM2 runs the overlay's script")
	require.Len(t, r.Steps, 1)
	step := r.Steps[0]
	require.Equal(t, filepath.Join("model_export_scripts", "lfm2.py"), step.Argv[1])

	layOut(t, r, work)
	log, res := runMTKStage(t, step)
	stoppedAtPartitioner(t, log, res)
	ranBeforeTheSDK(t, log, r, mt)
	embeddingWritten(t, r)
}

// layOut writes the tree export lays out for r in work: the recipe's files, the overlaid
// copy of MediaTek's scripts, the weights folder.
func layOut(t *testing.T, r *recipe.Recipe, work string) {
	for name, data := range r.Files {
		p := filepath.Join(work, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	require.NoError(t, mtkoverlay.Apply(r.Prepare.Examples, r.Prepare.Copy, r.Prepare.Overlay))
	for _, f := range mtkoverlay.Files("lfm2") {
		assert.FileExists(t, filepath.Join(r.Prepare.Copy, f), "the overlay wrote %s", f)
	}
	linkFolder(t, r.Prepare.Source, r.Prepare.Weights, "config.json")
}

// runMTKStage runs the recipe's step through vendor/mtk_stage.py with the toolchain python
// and returns its log and the result it reports of where the script stopped.
func runMTKStage(t *testing.T, step recipe.Step) (string, mtkResult) {
	env := []string{"HOME=" + t.TempDir(), "HF_HUB_OFFLINE=1", "HF_DATASETS_OFFLINE=1", "TRANSFORMERS_OFFLINE=1"}
	for k, v := range step.Env {
		if k != "LD_LIBRARY_PATH" { // the NeuroPilot venv's mtk_neuron/lib: not here
			env = append(env, k+"="+v)
		}
	}
	start := time.Now()
	args := append([]string{vendorScript(t, "mtk_stage.py")}, step.Argv[1:]...)
	log, err := runPython(t, step.Dir, env, 15*time.Minute, args...)
	t.Logf("%s (in %s): %s", strings.Join(step.Argv[1:], " "), step.Dir, time.Since(start).Round(time.Second))
	require.NoError(t, err, "mtk_stage.py ends normally and reports where the script stopped:\n%s", lastLines(log, 60))
	i := strings.LastIndex(log, "MTK_STAGE_RESULT ")
	require.GreaterOrEqual(t, i, 0, "no result:\n%s", lastLines(log, 60))
	var res mtkResult
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(log[i+len("MTK_STAGE_RESULT "):])), &res))
	return log, res
}

// stoppedAtPartitioner checks the tokenizer served and the stop: the first SDK use, from the
// partitioner, under lfm2.py's export of chunk 0.
func stoppedAtPartitioner(t *testing.T, log string, res mtkResult) {
	// The tokenizer: what was served, and why.
	t.Logf("transformers %s; vendored fast tokenizer: %s; served: %s", res.Transformers, res.Tokenizer.Vendored, res.Tokenizer.Served)
	assert.NotEmpty(t, res.Tokenizer.Served)
	if strings.HasPrefix(res.Transformers, "5.") {
		assert.False(t, res.SpecialTokensMixin, "transformers 5 has no tokenization_utils_base.SpecialTokensMixin, which MediaTek's vendored tokenization_utils_fast.py:37 imports")
	}

	// The stop: the first SDK use, from the partitioner, under lfm2.py's export of chunk 0.
	require.NotNil(t, res.Stopped, "the script ran to its end without the SDK:\n%s", lastLines(log, 40))
	assert.Equal(t, "SDKCalled", res.Stopped.Type, "%s\n%s", res.Stopped.Message, lastLines(log, 40))
	assert.Equal(t, []string{"mtk_converter.python.converters.pytorch.importer_v2.is_fx_node_supported"}, res.SDKUses,
		"the SDK was used exactly once, for the partitioner's support query")
	assert.True(t, res.frame(filepath.Join("backends", "mediatek", "partitioner.py"), "is_node_supported"), "the stop is in NeuropilotPartitioner: %v", res.Stopped.Frames)
	assert.True(t, res.frame(filepath.Join("exir", "backend", "backend_api.py"), "_"), "under to_backend: %v", res.Stopped.Frames)
	assert.True(t, res.frame("lfm2.py", "export_chunk"), "in lfm2.py's export_chunk: %v", res.Stopped.Frames)
}

// ranBeforeTheSDK checks everything before the stop ran: calibration on every prompt, then
// each shape of chunk 0 exported to edge, then the delegation that needs the SDK; no
// program written.
func ranBeforeTheSDK(t *testing.T, log string, r *recipe.Recipe, mt config.MTKRecipe) {
	cal := regexp.MustCompile(`Calibrating Model: (\d+) prompts streamed through (\d+) chunks`).FindStringSubmatch(log)
	require.Len(t, cal, 3, "calibration started")
	assert.Equal(t, fmt.Sprint(r.Fields["num_chunks"]), cal[2], "the recipe's chunks")
	prompts := regexp.MustCompile(`Calibration prompt (\d+)/`+cal[1]+`: (\d+) prompt tokens, (\d+) positions`).FindAllStringSubmatch(log, -1)
	assert.Len(t, prompts, atoi(t, cal[1]), "every prompt was streamed")
	exp := fmt.Sprintf("%s_%s_%d_chunks", filepath.Base(r.Prepare.Weights), mt.Precision, r.Fields["num_chunks"])
	markers := []string{"Instantiating submodels", "Exporting Chunk 0 to PTE", "Calibrating Model:"}
	for _, shape := range []string{fmt.Sprintf("%dt%dc", mt.PromptTokens, mt.CacheSize), fmt.Sprintf("1t%dc", mt.CacheSize)} {
		markers = append(markers, "Getting ATen Dialect Graph for "+exp+" "+shape+" chunk 0")
	}
	inOrder(t, log, append(markers, "Delegating Edge Program to Neuropilot Backend", "SDKCalled")...)
	assert.NotContains(t, log, "ET Model chunk", "no chunk was written")
}

// embeddingWritten checks the embedding table the recipe publishes was written by
// dump_embedding_lut_for_cmdline, at its planned size.
func embeddingWritten(t *testing.T, r *recipe.Recipe) {
	var emb *recipe.Output
	for i := range r.Outputs {
		if r.Outputs[i].Kind == "embedding" {
			emb = &r.Outputs[i]
		}
	}
	require.NotNil(t, emb)
	st, err := os.Stat(emb.From)
	require.NoError(t, err, "the embedding table")
	assert.Equal(t, emb.Bytes, st.Size(), "vocab × hidden × 4 bytes")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}
