package mtkoverlay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"

	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // config checks its chips against every backend
	"github.com/experimentalmachines/exe-expo/internal/backend/mediatek"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
)

// needTool skips a test that lacks a tool, unless CI promised to install it.
func needTool(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatalf("EXE_EXPO_CI=1 and %v (CI installs python3-torch with apt)", err)
	}
	t.Skipf("skipping: %v (apt-get install -y python3-torch)", err)
}

// applied is the overlay laid over the stock files, as export lays it.
func applied(t *testing.T) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "mediatek")
	require.NoError(t, mtkoverlay.Apply(userTree(t), to, "lfm2"))
	return to
}

// TestPyCompile: every Python file the overlay writes or patches parses and compiles, with
// any python3.
func TestPyCompile(t *testing.T) {
	var py string
	for _, c := range drivers.DefaultPythons {
		if p, err := exec.LookPath(c); err == nil {
			py = p
			break
		}
	}
	if py == "" {
		needTool(t, fmt.Errorf("no python3 on this machine"))
	}
	to := applied(t)
	for _, p := range mtkoverlay.Files("lfm2") {
		t.Run(p, func(t *testing.T) {
			cmd := exec.Command(py, "-m", "py_compile", filepath.Join(to, p))
			cmd.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir())
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
	}
}

// overlayReport is what testdata/check_overlay.py prints.
type overlayReport struct {
	LFM2Classes    []string `json:"lfm2_classes"`
	LFM2Normalized string   `json:"lfm2_normalized"`
	LFM2Tokenizer  string   `json:"lfm2_tokenizer"`
	UnknownModel   string   `json:"unknown_model"`
	Qwen3Classes   []string `json:"qwen3_classes"`
	Config         struct {
		Intermediate int64    `json:"intermediate_size"`
		HeadDim      int64    `json:"head_dim"`
		LayerTypes   []string `json:"layer_types"`
		RopeTheta    float64  `json:"rope_theta"`
		Tied         bool     `json:"tie_word_embeddings"`
		ConvLCache   int64    `json:"conv_L_cache"`
		NormEps      float64  `json:"norm_eps"`
		BOS          int      `json:"bos"`
		EOS          int      `json:"eos"`
	} `json:"config"`
	Refusals     map[string]string `json:"refusals"`
	Args         map[string]any    `json:"args"`
	FilesExist   map[string]bool   `json:"files_exist"`
	UnknownFlag  string            `json:"unknown_flag"`
	FFN          int               `json:"ffn"`
	Streamed     float64           `json:"streamed"`
	RightPadded  float64           `json:"right_padded"`
	LeftPadded   float64           `json:"left_padded"`
	StreamPrompt struct {
		Fed       int   `json:"fed"`
		Replies   []int `json:"replies"`
		Reference []int `json:"reference"`
	} `json:"stream_prompt"`
	ExampleStates []bool `json:"example_states"`
	Dynamic       []any  `json:"dynamic"`
	MissingTensor string `json:"missing_tensor"`
}

// lfm2Recipe is the MediaTek recipe for LFM2-1.2B: the weights config.json it writes (in
// a temporary weights folder) and its command line.
func lfm2Recipe(t *testing.T) (cfgPath string, argv []string, a model.Arch) {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	src, err := snapshot.Load(context.Background(), "LiquidAI/LFM2-1.2B")
	require.NoError(t, err)
	work := t.TempDir()
	r, err := mediatek.Build(cfg, recipe.Request{Backend: "mediatek", Source: src, Verdict: backend.Evaluate(cfg, src), Window: 512, SoC: "MT6991",
		Work: work, SourceDir: filepath.Join(work, "source"), ExecuTorch: "/opt/executorch", MTKPython: "/opt/mtk-venv/bin/python"})
	require.NoError(t, err)
	name := filepath.Join("weights", "LFM2-1.2B", "config.json")
	require.Contains(t, r.Files, name)
	cfgPath = filepath.Join(work, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(cfgPath), 0o755))
	require.NoError(t, os.WriteFile(cfgPath, r.Files[name], 0o644))
	require.Len(t, r.Steps, 1)
	a, err = src.Config.Arch()
	require.NoError(t, err)
	return cfgPath, r.Steps[0].Argv, a
}

// TestOverlayImportsAndRuns applies the overlay to ExecuTorch v1.4.0's files, imports the
// patched helpers and the new model with /usr/bin/python3 (executorch, torchao and
// safetensors stubbed; torch real), parses the recipe's LFM2 command line with lfm2.py's
// parser, and runs a tiny LFM2 through the chunks against an independent full-sequence
// LFM2. It fails if the overlay does not apply, import, parse or compute.
func TestOverlayImportsAndRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	py, _, err := drivers.FindTorchPython(ctx)
	needTool(t, err)
	cfgPath, argv, a := lfm2Recipe(t)
	rep := runCheck(t, py, applied(t), cfgPath, argv)

	assert.Equal(t, []string{"Lfm2Config", "Lfm2ModelChunk"}, rep.LFM2Classes, "utils.resolve_model_classes knows lfm2")
	assert.Equal(t, "Lfm2Config", rep.LFM2Normalized, "utils.get_normalized_config knows lfm2")
	assert.Equal(t, "pretrained_fast", rep.LFM2Tokenizer)
	assert.Contains(t, rep.UnknownModel, "Unsupported model: nosuch", "sanity_checks still refuses what it does not list")
	assert.Equal(t, []string{"QwenConfig", "Qwen3ModelChunk"}, rep.Qwen3Classes, "the stock lookups still work")

	c := rep.Config
	assert.Equal(t, a.FFNDim, c.Intermediate, "the Python and Go feed-forward rules agree (12,288 configured, 8,192 built)")
	assert.Equal(t, a.HeadDim, c.HeadDim)
	assert.Equal(t, a.LayerTypes, c.LayerTypes, "full_attn_idxs became the recipe's layer_types")
	assert.Equal(t, 1e6, c.RopeTheta)
	assert.True(t, c.Tied)
	assert.Equal(t, int64(3), c.ConvLCache)
	assert.Equal(t, 1e-5, c.NormEps)
	assert.Equal(t, []int{1, 7}, []int{c.BOS, c.EOS})
	assert.Contains(t, rep.Refusals["conv_L_cache"], "conv_L_cache is 4, and this LFM2 model builds its short convolution with a kernel of 3")
	assert.Contains(t, rep.Refusals["conv_bias"], "conv_bias is set")
	assert.Contains(t, rep.Refusals["layer_types"], "layer_types lists 1 layers, and num_hidden_layers is 16")
	assert.Contains(t, rep.Refusals["scaling"], "is not implemented for lfm2")

	assert.Equal(t, "model_export_scripts/lfm2.py", argv[1])
	assert.Equal(t, map[string]any{"config": cfgPath, "precision": "A16W8", "platform": "DX4", "num_chunks": 4.0, "response_cap": 9.0,
		"dataset": "aot_utils/llm_utils/prompts/alpaca.txt", "preformatter": "aot_utils/llm_utils/preformatter_templates/qwen3.json",
		"shapes": []any{"128t512c", "1t512c"}}, rep.Args)
	assert.Equal(t, map[string]bool{"dataset": true, "preformatter": true}, rep.FilesExist, "the recipe names v1.4.0's prompts and template")
	assert.Equal(t, "exit 2", rep.UnknownFlag)

	assert.Equal(t, 64, rep.FFN)
	assert.Less(t, rep.Streamed, 1e-4, "prompt blocks and single tokens match the full sequence")
	assert.Less(t, rep.RightPadded, 1e-4, "conv_select keeps the state at the last real token")
	assert.Less(t, rep.LeftPadded, 1e-5, "conv_valid makes left pads read as a fresh state")
	assert.Equal(t, 9, rep.StreamPrompt.Fed, "six prompt tokens in blocks of four, three replies")
	assert.Equal(t, rep.StreamPrompt.Reference, rep.StreamPrompt.Replies, "lfm2.py's greedy replies are the reference's")
	assert.Equal(t, []bool{true, true, true}, rep.ExampleStates, "a conv state and a key/value cache out, shaped as in")
	assert.Equal(t, []any{6.0, 3.0, "num_token+2", "num_token+32"}, rep.Dynamic)
	assert.Contains(t, rep.MissingTensor, "the checkpoint has no model.layers.2.conv.in_proj.weight")
}

func runCheck(t *testing.T, py, examples, cfgPath string, argv []string) overlayReport {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "check_overlay.py"))
	require.NoError(t, err)
	os.Stat(script) // lets go test's result cache see changes to the script
	a, err := json.Marshal(argv)
	require.NoError(t, err)
	cmd := exec.Command(py, script, examples, cfgPath, string(a))
	cmd.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir(), "PYTHONDONTWRITEBYTECODE=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "check_overlay.py: %s", stderr.String())
	var rep overlayReport
	require.NoError(t, json.Unmarshal(out, &rep), "check_overlay.py printed %s", out)
	return rep
}
