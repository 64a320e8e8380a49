package realtool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/backend/qnn"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	pkgexport "github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// The vendor tests run the pinned ExecuTorch's real Qualcomm and MediaTek LLM scripts, from
// exe-expo's own recipes, as far as a machine without the vendor SDKs lets them go: to the
// first call into the SDK. What each stand-in replaces, and why, is in the docstrings of
// testdata/vendor/*.py; docs/research/vendor-real.md has the findings.

const llamaID = "meta-llama/Llama-3.2-1B-Instruct"

// vendorScript is the absolute path of a driver in testdata/vendor.
func vendorScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "vendor", name))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// linkFolder links every file of from into to (which it creates), except those named in
// skip: a model folder another test may share, seen through links and never written.
func linkFolder(t *testing.T, from, to string, skip ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(to, 0o755))
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || contains(skip, e.Name()) {
			continue
		}
		src, err := filepath.Abs(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.Symlink(src, filepath.Join(to, e.Name())))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runPython runs a driver with the real toolchain's python and returns its combined output.
func runPython(t *testing.T, dir string, env []string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// metaOriginal lays out a local Hub-style folder of the tiny Llama 3.2 with Meta's original/
// beside it, as the Hub's meta-llama repos hold it and the QNN recipe reads it
// (--checkpoint original/consolidated.00.pth, --params original/params.json,
// --tokenizer_model original/tokenizer.model): the checkpoint and params file are exe-expo's
// own converter's (export.PrepareCheckpoint: Meta's names, q and k un-permuted to Meta's
// rotary order, the params an export_llm export builds the same model from), the tokenizer
// file the tiny tokenizer.json's byte-level BPE in tiktoken form (vendor/meta_tokenizer.py).
func metaOriginal(t *testing.T, base string) string {
	t.Helper()
	model := tiny(t, "llama3.2", replyA, 1)
	cfg, err := config.Default()
	require.NoError(t, err)
	var log bytes.Buffer
	ck, err := pkgexport.PrepareCheckpoint(context.Background(), pkgexport.Options{
		Config: cfg, Model: model, ID: llamaID, Work: filepath.Join(base, "convert"), Python: python(t), Log: &log,
	})
	require.NoError(t, err, "exe-expo's checkpoint conversion:\n%s", lastLines(log.String(), 20))
	require.Equal(t, "llama3_2", ck.ModelClass, "the converter's model class for Llama 3.2")

	src := filepath.Join(base, "source", filepath.Base(model))
	linkFolder(t, model, src)
	orig := filepath.Join(src, "original")
	require.NoError(t, os.MkdirAll(orig, 0o755))
	require.NoError(t, os.Symlink(ck.Checkpoint, filepath.Join(orig, "consolidated.00.pth")))
	require.NoError(t, os.Symlink(ck.Params, filepath.Join(orig, "params.json")))
	out, err := runPython(t, base, nil, 2*time.Minute, vendorScript(t, "meta_tokenizer.py"),
		filepath.Join(model, "tokenizer.json"), filepath.Join(orig, "tokenizer.model"))
	require.NoError(t, err, "meta_tokenizer.py:\n%s", out)
	t.Logf("original/: %s, %s, tokenizer.model %s", ck.Checkpoint, ck.Params, strings.TrimSpace(out))
	return src
}

// qnnPython writes the --python the QNN export runs with: the real toolchain python, but
// with QNN_SDK_ROOT set to an empty folder, a throwaway HOME, no Hub access, and the
// recipe's qnn_launch.py run through vendor/qnn_stage.py (the lm_eval calibration rows
// served locally). Every other call (the toolchain probe) is the plain
// python.
func qnnPython(t *testing.T, base string) (wrapper, sdkRoot string) {
	t.Helper()
	sdkRoot, home := filepath.Join(base, "qnn-sdk-empty"), filepath.Join(base, "home")
	require.NoError(t, os.MkdirAll(sdkRoot, 0o755))
	require.NoError(t, os.MkdirAll(home, 0o755))
	py, stage := shellQuote(python(t)), shellQuote(vendorScript(t, "qnn_stage.py"))
	script := "#!/bin/sh\n" +
		"# e2e/realtool vendor_test.go: the real python, without the QNN SDK and without network\n" +
		"export QNN_SDK_ROOT=" + shellQuote(sdkRoot) + " HOME=" + shellQuote(home) + "\n" +
		"export QNN_STAGE_SDK_BUILD_ID=" + shellQuote("v"+qairt(t)) + "\n" +
		"export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1\n" +
		"case \"$1\" in\n" +
		"*/qnn_launch.py) exec " + py + " " + stage + " \"$@\" ;;\n" +
		"esac\n" +
		"exec " + py + " \"$@\"\n"
	wrapper = filepath.Join(base, "bin", "python")
	require.NoError(t, os.MkdirAll(filepath.Dir(wrapper), 0o755))
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper, sdkRoot
}

// qairt is the pinned QAIRT version (config/versions.env).
func qairt(t *testing.T) string {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	return cfg.Versions.QAIRT
}

// inOrder requires each marker in log after the one before it and returns their offsets.
func inOrder(t *testing.T, log string, markers ...string) []int {
	t.Helper()
	at := make([]int, len(markers))
	from := 0
	for i, m := range markers {
		j := strings.Index(log[from:], m)
		require.GreaterOrEqual(t, j, 0, "%q does not follow %q in the log (end of log:\n%s)", m, markers[max(i-1, 0)], lastLines(log, 40))
		at[i] = from + j
		from += j + len(m)
	}
	return at
}

// TestQNNBeforeLowering exports the tiny Llama 3.2 to QNN for SM8650 with export.Run, the
// function exe-expo export runs (the recipe's own command line, through
// drivers/qnn_launch.py, into the pinned ExecuTorch's real Qualcomm llama.py), from a folder whose
// original/ holds exe-expo's converted checkpoint. Without the QNN SDK the script must build
// the static decoders from that checkpoint, annotate, calibrate and convert them and save
// the quantized decode program, and only then stop at the SDK's first call: opening the HTP
// backend library inside to_edge_transform_and_lower_to_qnn. The export must fail there, in
// its tool, and nowhere earlier. The saved QDQ program is then measured on the CPU as the
// export's simulated quality step measures it (checkSimulated).
func TestQNNBeforeLowering(t *testing.T) {
	t.Parallel()
	python(t)
	cfg, err := config.Default()
	require.NoError(t, err)
	window := fmt.Sprint(cfg.Export.QNN.MaxContextLen)
	base := t.TempDir()
	src := sharedOriginal(t)
	wrapper, sdkRoot := qnnPython(t, base)
	work, out := filepath.Join(base, "work"), filepath.Join(base, "out")

	// export.Run is what exe-expo export runs after its flags. Its host gate holds the
	// QNN recipe to qnn.FloorBytes, QAIRT's compile, whatever the model: more than
	// this machine's memory. The pipeline's setup-export adds swap for it; here the gate is
	// told the host has that swap (the compile, the only step that needs it, cannot start).
	var logBuf bytes.Buffer
	start := time.Now()
	_, err = pkgexport.Run(context.Background(), pkgexport.Options{
		Config: cfg, Backend: "qnn", SoC: "SM8650", Model: src, ID: llamaID, Python: wrapper,
		Out: out, Work: work, KeepWork: true, Log: &logBuf,
		Host: func(dir string) (run.HostFacts, error) {
			h, err := run.Host(dir)
			h.SwapTotalBytes += 64 << 30
			return h, err
		},
	})
	log := logBuf.String()
	t.Logf("export --backend qnn: %v after %s", err, time.Since(start).Round(time.Second))
	var exit *run.ExitError
	require.ErrorAs(t, err, &exit, "the export fails in its tool\nlog (end):\n%s", lastLines(log, 60))
	assert.Equal(t, "qnn_llama", exit.Tool)
	assert.Equal(t, 1, exit.Status)

	// The recipe's command line ran, through the launcher, in the test's environment.
	assert.Contains(t, log, "exe-expo: "+llamaID+" to qnn at "+window+" tokens", "the plan's fixed QNN window")
	assert.Contains(t, log, "qnn_stage: QNN_SDK_ROOT="+sdkRoot)
	assert.Contains(t, log, "[QNN] Using QNN SDK at "+sdkRoot, "backends/qualcomm/__init__.py took the empty SDK root and downloaded nothing")
	assert.NotContains(t, log, "Failed to set up QNN SDK")
	assert.Contains(t, log, "qnn_launch: torchtune: no torchtune (ModuleNotFoundError", "the lock has no torchtune; the launcher serves ExecuTorch's get_mapped_key")
	assert.NotContains(t, log, "FullModelHFCheckpointer", "the Llama 3.2 path converts nothing with torchtune")
	// from 1.5 the quantization passes ask the SDK its version: the stand-in answers as the
	// pinned QAIRT does, so the gates decide as on a runner
	assert.Contains(t, log, "qnn_stage: the SDK's build id asked of "+filepath.Join(sdkRoot, "lib", "x86_64-linux-clang", "libQnnHtp.so")+": answered v"+qairt(t))

	// Before the stop: the three decoders built from the checkpoint, annotated, calibrated
	// on the served rows and converted (the quantize stage, as internal/run's QNN stage rules
	// read it), the QDQ program saved by the compile; then, inside the compile, the lowering
	// opens the HTP backend library, and that is the first thing that fails.
	at := inOrder(t, log,
		"calling HybridTextDecoder::__init__",
		"HybridTextDecoder::__init__ completed in",
		"calling MultiModalManager::quantize",
		"qnn_stage: calibration rows served locally in place of lm_eval wikitext (limit 1)",
		"Calibration complete", // 1.4.0 added " for prepare_pt2e"
		"MultiModalManager::quantize completed in",
		"calling MultiModalManager::compile",
		"QDQ EP saved to "+filepath.Join(work, "artifact"),
		"[ERROR] [Qnn ExecuTorch]: Cannot Open QNN library ", // 1.5 names the library by its path under QNN_SDK_ROOT
		"Traceback (most recent call last):",
		"RuntimeError: Failed to initialize QNN backend for kHtpBackend",
	)
	assert.NotContains(t, log[:at[9]], "Traceback", "nothing failed before the SDK")
	assert.NotContains(t, log[:at[8]], "[ERROR]", "no error before the SDK's library was opened")
	trace := log[at[9]:at[10]]
	assert.Regexp(t, `llm_wrappers\.py", line \d+, in compile\n.*to_edge_transform_and_lower_to_qnn\(`, trace, "raised under the compile's lowering call")
	assert.Regexp(t, `qnn_manager_lifecycle\.py", line \d+, in get_or_create_qnn_manager`, trace, "raised by the QNN manager's backend initialization")
	assert.NotContains(t, log, "huggingface.co", "no Hub access was attempted")

	rows := regexp.MustCompile(`calibration rows served locally .*: (\d+) row\(s\), (\d+) tokens, max_context_length (\d+)`).FindStringSubmatch(log)
	require.Len(t, rows, 4)
	assert.Equal(t, window, rows[3], "the calibration rows are cut at the window")
	qdq, err := filepath.Glob(filepath.Join(work, "artifact", "*.pt2"))
	require.NoError(t, err)
	require.Len(t, qdq, 1, "the QDQ program was written before the lowering")
	got, err := runPython(t, base, nil, 3*time.Minute, vendorScript(t, "qdq_ops.py"), qdq[0])
	require.NoError(t, err, "qdq_ops.py:\n%s", lastLines(got, 20))
	var ops struct{ Nodes, Quantize, Dequantize, Inputs, Outputs int }
	require.NoError(t, json.Unmarshal([]byte(lastLines(got, 1)), &ops), "%s", got)
	t.Logf("%s: %d nodes, %d quantize and %d dequantize ops, %d inputs, %d outputs", filepath.Base(qdq[0]),
		ops.Nodes, ops.Quantize, ops.Dequantize, ops.Inputs, ops.Outputs)
	assert.Greater(t, ops.Quantize, 0, "the saved decode program is quantized")
	assert.Greater(t, ops.Dequantize, 0, "the saved decode program is quantized")
	assert.Equal(t, filepath.Join(work, "artifact", qnn.QDQFile), qdq[0], "the program the recipe's simulated measure reads")
	checkSimulated(t, qdq[0], src)
	pte, _ := filepath.Glob(filepath.Join(work, "artifact", "*.pte"))
	assert.Empty(t, pte, "no program was compiled without the SDK")
	_, err = os.Stat(filepath.Join(work, "qnn-inputs.json"))
	assert.True(t, os.IsNotExist(err), "the launcher records its inputs only after a success")
	empty, err := os.ReadDir(sdkRoot)
	require.NoError(t, err)
	assert.Empty(t, empty, "nothing was put into the SDK root")
}

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

	// The tree export lays out: the recipe's files, the overlaid copy, the weights folder.
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

	// Everything before it ran: calibration on every prompt, then each shape of chunk 0
	// exported to edge, then the delegation that needs the SDK; no program written.
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

	// The embedding table the recipe publishes, written by dump_embedding_lut_for_cmdline.
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

// TestQNNLauncherWithoutTorchtune checks the launcher's answer to the lock having no
// torchtune against the pinned ExecuTorch's real modules: the Qualcomm script's package imports,
// ExecuTorch's own Qwen2.5 converter runs on the tiny Qwen2.5 with the key mapping the
// launcher serves and writes Meta's names, and SmolLM2's converter, which needs torchtune's
// checkpointer, stops with a sentence that says so.
func TestQNNLauncherWithoutTorchtune(t *testing.T) {
	t.Parallel()
	python(t)
	qwen, smol := tiny(t, "qwen2.5", replyA, 1), tiny(t, "smollm2", replyA, 1)
	work := t.TempDir()
	paths, err := drivers.WriteScripts(filepath.Join(work, "drivers"))
	require.NoError(t, err)
	launcher := filepath.Join(work, "drivers", drivers.QNNLaunchScript)
	require.Contains(t, paths, launcher)
	sdkRoot := filepath.Join(work, "qnn-sdk-empty") // the package's import needs QNN_SDK_ROOT set
	require.NoError(t, os.MkdirAll(sdkRoot, 0o755))
	out, err := runPython(t, work, []string{"HF_HUB_OFFLINE=1", "QNN_SDK_ROOT=" + sdkRoot}, 5*time.Minute,
		vendorScript(t, "torchtune_check.py"), launcher, qwen, smol, work)
	require.NoError(t, err, "torchtune_check.py:\n%s", lastLines(out, 30))
	var res struct {
		Provided    string   `json:"provided"`
		QwenKeys    []string `json:"qwen_keys"`
		SmolLM2Stop *string  `json:"smollm2_stop"`
	}
	require.NoError(t, json.Unmarshal([]byte(lastLines(out, 1)), &res), "%s", out)
	assert.Contains(t, res.Provided, "no torchtune (ModuleNotFoundError")
	// The tiny Qwen2.5 has 2 layers: 9 tensors each with the q, k and v biases, plus the
	// embedding, the final norm and the output head.
	assert.Len(t, res.QwenKeys, 2*12+3, "%v", res.QwenKeys)
	for _, k := range []string{"tok_embeddings.weight", "norm.weight", "output.weight",
		"layers.1.attention.wq.weight", "layers.1.attention.wq.bias", "layers.0.feed_forward.w2.weight", "layers.0.ffn_norm.weight"} {
		assert.Contains(t, res.QwenKeys, k)
	}
	require.NotNil(t, res.SmolLM2Stop, "SmolLM2's conversion must stop without torchtune")
	assert.Contains(t, *res.SmolLM2Stop, "torchtune's FullModelHFCheckpointer")
	assert.Contains(t, *res.SmolLM2Stop, smol, "the sentence names the model folder")
}
