package realtool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/backend/qnn"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	pkgexport "github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const llamaID = "meta-llama/Llama-3.2-1B-Instruct"

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

	ranThroughLauncher(t, log, window, sdkRoot)
	stoppedAtTheSDK(t, log, work)
	measuredQDQ(t, log, base, work, window, src)
	pte, _ := filepath.Glob(filepath.Join(work, "artifact", "*.pte"))
	assert.Empty(t, pte, "no program was compiled without the SDK")
	_, err = os.Stat(filepath.Join(work, "qnn-inputs.json"))
	assert.True(t, os.IsNotExist(err), "the launcher records its inputs only after a success")
	empty, err := os.ReadDir(sdkRoot)
	require.NoError(t, err)
	assert.Empty(t, empty, "nothing was put into the SDK root")
}

// ranThroughLauncher checks the recipe's command line ran, through the launcher, in the
// test's environment: the plan's window, the empty SDK root, no torchtune, the pinned QAIRT.
func ranThroughLauncher(t *testing.T, log, window, sdkRoot string) {
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
}

// stoppedAtTheSDK checks the script got as far as the SDK and no further: it built,
// calibrated and converted the decoders and saved the QDQ program, then failed opening the
// HTP backend library inside the lowering.
func stoppedAtTheSDK(t *testing.T, log, work string) {
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
}

// measuredQDQ checks the calibration rows were cut at the window and the saved QDQ program
// is quantized, where the recipe's simulated measure reads it, and measures it as export
// does (checkSimulated).
func measuredQDQ(t *testing.T, log, base, work, window, src string) {
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
