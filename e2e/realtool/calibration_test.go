package realtool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	pkgexport "github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// qdqComparison is vendor/qdq_compare.py's last line.
type qdqComparison struct {
	Nodes           [2]int `json:"nodes"`
	SameGraph       bool   `json:"same_graph"`
	FirstDifference string `json:"first_difference"`
	Activation      struct {
		Count, Identical int
		MaxRelScale      float64 `json:"max_rel_scale"`
		MaxZeroPoint     float64 `json:"max_zero_point"`
		MaxRangeError    float64 `json:"max_range_error"`
	} `json:"activation"`
	Weight struct {
		Count, Identical int
		MaxRelScale      float64 `json:"max_rel_scale"`
		MaxZeroPoint     float64 `json:"max_zero_point"`
		ValuesIdentical  int     `json:"values_identical"`
	} `json:"weight"`
	Constants []struct {
		Name      string `json:"name"`
		Shape     []int  `json:"shape"`
		Shared    []int  `json:"shared_shape"`
		Equal     bool   `json:"equal"`
		ReadByQDQ bool   `json:"read_by_qdq"`
	} `json:"constants"`
	Differences []struct {
		Node      string     `json:"node"`
		Input     string     `json:"input"`
		Scale     [2]float64 `json:"scale"`
		ZeroPoint [2]float64 `json:"zero_point"`
		RelScale  float64    `json:"rel_scale"`
	} `json:"differences"`
}

// The shared-calibration tolerances, measured on the tiny Llama 3.2 (TestQNNSharedCalibration,
// docs/research/qnn-calibration.md). llama.py pads every calibration row to the graph's
// length, so a 4096-token calibration also observes pad tokens at positions 2048-4095
// (their RoPE angles, their attention rows) that a 2048-token one never sees: 52 of 405
// activation encodings moved, none by more than 5.2% of its interval, and SeqMSE chose
// another scale for 2 of 15 weight encodings, 0.71% apart. Every other encoding is
// bit-identical.
const (
	// sharedRangeTolerance bounds how far either end of an activation encoding's interval
	// may move, as a share of the interval's width.
	sharedRangeTolerance = 0.08
	// sharedWeightScaleTolerance bounds the relative difference of any weight scale.
	sharedWeightScaleTolerance = 0.02
	// sharedIdenticalShare is the least share of activation encodings that must be
	// bit-identical (measured 353 of 405, 0.87).
	sharedIdenticalShare = 0.8
)

// tokens is the length of the calibration text the stand-in served, as its log line says.
func tokens(t *testing.T, log string) int {
	t.Helper()
	m := regexp.MustCompile(`calibration rows served locally .*: \d+ row\(s\), (\d+) tokens`).FindStringSubmatch(log)
	require.Len(t, m, 2, "the stand-in's calibration line")
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// TestQNNSharedCalibration exports the tiny Llama 3.2 to QNN at 4096 tokens twice, with
// export.Run and the recipe's own command line, as far as the SDK lets it go (see
// TestQNNBeforeLowering): once calibrated at its own length, once with export.qnn.calib_window
// 2048, the launcher's --calib-window (a 2048-token calibration whose encodings the 4096-token
// graph gets). The two saved QDQ programs must be the same graph node for node, every
// activation and weight encoding within the stated tolerance, and the frozen constants (the
// RoPE tables, 4096 rows) the 4096-token graph's own, not the 2048-token graph's. Its second
// half (calibrationFile) is the workflow's calibrate-once path, reusing the shared run.
func TestQNNSharedCalibration(t *testing.T) {
	t.Parallel()
	python(t)
	const window, short = 4096, 2048
	base := t.TempDir()
	src := sharedOriginal(t)
	wrapper, _ := qnnPython(t, base)
	runs := qnnRuns{t: t, base: base, src: src, wrapper: wrapper, window: window}

	own, ownLog, ownQ := runs.export("own", 0, nil)
	assert.NotContains(t, ownLog, "--calib-window", "calib_window 0: the window calibrates at its own length")
	shared, sharedLog, sharedQ := runs.export("shared", short, nil)
	t.Logf("quantize stage (calibration, conversion): %.1f s calibrated at %d, %.1f s at %d for %d", ownQ, window, sharedQ, short, window)
	assert.Contains(t, sharedLog, fmt.Sprintf("--calib-window %d --", short), "the recipe passes the calibration window to the launcher")
	inOrder(t, sharedLog,
		fmt.Sprintf("qnn_launch: calibration graph built at %d tokens for the %d-token window", short, window),
		fmt.Sprintf("calibration rows served locally in place of lm_eval wikitext (limit 1): 1 row(s), %d tokens, max_context_length %d", tokens(t, ownLog), short),
		fmt.Sprintf("qnn_launch: encodings calibrated at %d tokens copied to the %d-token graph; its own constants kept: ", short, window),
	)
	assert.NotContains(t, sharedLog, fmt.Sprintf("max_context_length %d", window), "no calibration row at the deployed window")
	kept := regexp.MustCompile(`qnn_launch: encodings calibrated at .*`).FindString(sharedLog)
	t.Logf("%s", kept)

	c := compareQDQ(t, base, own, shared)
	logShared(t, c, window, short)
	sharedHolds(t, c, window)
	calibrationFile(t, runs, shared, sharedQ)
}

// qnnRuns exports the tiny Llama 3.2 (src, Meta's original/ files) to QNN at window tokens
// with export.Run and the recipe's own command line (wrapper), each run in base/name.
type qnnRuns struct {
	t                  *testing.T
	base, src, wrapper string
	window             int
}

// start runs one export of the tiny model; edit sets what the run differs in.
func (q qnnRuns) start(name string, calib int, edit func(*pkgexport.Options)) (res *pkgexport.Result, log, work string, err error) {
	t := q.t
	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.Export.QNN.CalibWindow = calib
	work = filepath.Join(q.base, name)
	var logBuf bytes.Buffer
	begin := time.Now()
	o := pkgexport.Options{
		Config: cfg, Backend: "qnn", SoC: "SM8650", Model: q.src, ID: llamaID, Python: q.wrapper, Window: q.window,
		Out: filepath.Join(q.base, name+"-out"), Work: work, KeepWork: true, Log: &logBuf,
		Host: func(dir string) (run.HostFacts, error) { // as in TestQNNBeforeLowering: the compile's swap
			h, err := run.Host(dir)
			h.SwapTotalBytes += 64 << 30
			return h, err
		},
	}
	if edit != nil {
		edit(&o)
	}
	res, err = pkgexport.Run(context.Background(), o)
	log = logBuf.String()
	t.Logf("%s: export --backend qnn --context %d: %v after %s", name, o.Window, err, time.Since(begin).Round(time.Second))
	return res, log, work, err
}

// export runs one export that goes as far as the SDK lets it, calibrated at calib tokens
// (0: the window's own) or as edit says, and returns its saved QDQ program, its log and
// the seconds of its quantize stage.
func (q qnnRuns) export(name string, calib int, edit func(*pkgexport.Options)) (qdq, log string, quantize float64) {
	t := q.t
	_, log, work, err := q.start(name, calib, edit)
	var exit *run.ExitError
	require.ErrorAs(t, err, &exit, "the export fails in its tool, at the SDK\nlog (end):\n%s", lastLines(log, 60))
	rows := fmt.Sprintf("max_context_length %d", q.window) // the calibration rows are cut at the window calibrated
	if calib > 0 {
		rows = fmt.Sprintf("max_context_length %d", calib)
	}
	if edit != nil { // built from a file: no calibration rows at all
		rows = "qnn_launch: encodings calibrated at"
	}
	at := inOrder(t, log,
		"calling MultiModalManager::quantize",
		rows,
		"MultiModalManager::quantize completed in",
		"QDQ EP saved to "+filepath.Join(work, "artifact"),
		"RuntimeError: Failed to initialize QNN backend for kHtpBackend",
	)
	assert.NotContains(t, log[:at[4]], "Traceback (most recent call last):\n  File \"/", "nothing failed before the SDK")
	m := regexp.MustCompile(`MultiModalManager::quantize completed in ([0-9.]+)`).FindStringSubmatch(log)
	if m != nil {
		quantize, _ = strconv.ParseFloat(m[1], 64)
	}
	qdqs, err := filepath.Glob(filepath.Join(work, "artifact", "*.pt2"))
	require.NoError(t, err)
	require.Len(t, qdqs, 1, "the QDQ program was written before the lowering")
	return qdqs[0], log, quantize
}

// logShared logs how the own calibration's program and the shared one's compare: nodes,
// encodings, the first differences and the constants that differ or have a row per position.
func logShared(t *testing.T, c qdqComparison, window, short int) {
	t.Logf("own vs shared: %d/%d nodes; activation encodings %d (%d identical, max relative scale difference %g, zero point %g, range end %g of its width); "+
		"weight encodings %d (%d identical, %d with identical values, max relative scale difference %g); %d constants",
		c.Nodes[0], c.Nodes[1], c.Activation.Count, c.Activation.Identical, c.Activation.MaxRelScale, c.Activation.MaxZeroPoint, c.Activation.MaxRangeError,
		c.Weight.Count, c.Weight.Identical, c.Weight.ValuesIdentical, c.Weight.MaxRelScale, len(c.Constants))

	for i, d := range c.Differences {
		if i == 12 {
			t.Logf("... %d more", len(c.Differences)-i)
			break
		}
		t.Logf("differs: %s (of %s): scale %g vs %g, zero point %g vs %g", d.Node, d.Input, d.Scale[0], d.Scale[1], d.ZeroPoint[0], d.ZeroPoint[1])
	}
	for _, k := range c.Constants {
		if !k.Equal || (len(k.Shape) > 0 && (k.Shape[0] == window || k.Shape[0] == short)) {
			t.Logf("constant %s %v (shared %v): equal %v, read by a quantize or dequantize op %v", k.Name, k.Shape, k.Shared, k.Equal, k.ReadByQDQ)
		}
	}
}

// sharedHolds holds the shared calibration's program to the own one's: the same graph,
// encodings within the stated tolerances, and the RoPE tables the window's own.
func sharedHolds(t *testing.T, c qdqComparison, window int) {
	require.True(t, c.SameGraph, "the same graph node for node: %s", c.FirstDifference)
	assert.Equal(t, c.Nodes[0], c.Nodes[1])
	assert.Positive(t, c.Activation.Count, "the program has activation encodings")
	assert.Positive(t, c.Weight.Count, "the program has per-channel weight encodings")
	assert.LessOrEqual(t, c.Activation.MaxRangeError, sharedRangeTolerance, "activation encodings: the ends of their intervals")
	assert.GreaterOrEqual(t, float64(c.Activation.Identical), sharedIdenticalShare*float64(c.Activation.Count), "bit-identical activation encodings")
	assert.LessOrEqual(t, c.Weight.MaxRelScale, sharedWeightScaleTolerance, "weight scales (SeqMSE's search)")
	assert.Zero(t, c.Weight.MaxZeroPoint, "weight zero points (symmetric)")
	// The RoPE tables (quantized constants with a row per position) are the 4096-token
	// graph's own, encoding and all: equal to the own calibration's. Weights may differ
	// where SeqMSE chose another scale (bounded above).
	rows := 0
	for _, k := range c.Constants {
		if len(k.Shape) == 2 && k.Shape[0] == window {
			rows++
			assert.True(t, k.Equal, "table %s %v (shared %v) is the 4096-token graph's own", k.Name, k.Shape, k.Shared)
		}
	}
	assert.GreaterOrEqual(t, rows, 2, "the cos and sin tables have %d rows: %+v", window, c.Constants)
}

// compareQDQ runs vendor/qdq_compare.py on two saved QDQ programs.
func compareQDQ(t *testing.T, dir, a, b string) qdqComparison {
	t.Helper()
	out, err := runPython(t, dir, nil, 3*time.Minute, vendorScript(t, "qdq_compare.py"), a, b)
	require.NoError(t, err, "qdq_compare.py:\n%s", lastLines(out, 20))
	var c qdqComparison
	require.NoError(t, json.Unmarshal([]byte(lastLines(out, 1)), &c), "%s", out)
	return c
}

// calibrationFile is the workflow's calibrate-once path (export.qnn.calibrate_once): a
// calibrate-only export at 2048 tokens writes the encodings to a file, and the 4096-token
// export built from that file (--calibration) must save the very QDQ program the in-process
// --calib-window 2048 export saved (shared): same graph, every encoding and constant
// bit-identical, since both calibrate the same 2048-token graph on the same rows. A
// corrupted file, or one made for another chip, is refused with a sentence before llama.py runs.
func calibrationFile(t *testing.T, runs qnnRuns, shared string, sharedQ float64) {
	file := filepath.Join(filepath.Dir(filepath.Dir(shared)), "..", "calibration", "qnn-calibration-SM8650.pt")
	file = filepath.Clean(file)
	calibrateOnly(t, runs, file)
	loadedIsShared(t, runs, file, shared, sharedQ)
	refusedFiles(t, runs, file)
}

// calibrateOnly runs the calibrate-only export that writes file: it calibrates at 2048
// tokens, builds no program, and its report names the file beside it.
func calibrateOnly(t *testing.T, runs qnnRuns, file string) {
	const short = 2048
	res, log, _, err := runs.start("calibrate", short, func(o *pkgexport.Options) {
		o.Window, o.CalibrateOnly, o.CalibrationOut = 0, true, file
	})
	require.NoError(t, err, "calibrate-only export\nlog (end):\n%s", lastLines(log, 60))
	inOrder(t, log,
		fmt.Sprintf("max_context_length %d", short),
		fmt.Sprintf("qnn_launch: calibration at %d tokens saved to %s", short, file),
		"qnn_launch: --calibrate-only: calibration saved to "+file+"; no window built",
	)
	assert.NotContains(t, log, "QDQ EP saved", "calibrate-only builds no program")
	assert.NotContains(t, log, "Failed to initialize QNN backend", "calibrate-only never reaches the SDK")
	require.Len(t, res.Report.Files, 1, "the report names the calibration file")
	assert.Equal(t, filepath.Base(file), res.Report.Files[0].Path)
	assert.Len(t, res.Report.Files[0].SHA256, 64)
	assert.Equal(t, filepath.Join(filepath.Dir(file), "export-report-calibration-2k.json"), res.ReportPath, "the report lies beside the file")
	require.NotNil(t, res.Report.Inputs)
	assert.NotEmpty(t, res.Report.Inputs.Calibration.TokensSHA256, "the report says what the calibration ran on")
	assert.Equal(t, short, res.Report.Window.Context)
	saved := regexp.MustCompile(`qnn_launch: calibration at .*`).FindString(log)
	t.Logf("%s (%d bytes)", saved, res.Report.Files[0].Bytes)

}

// loadedIsShared builds the window from file and holds its QDQ program to the in-process
// --calib-window export's (shared): every encoding and constant bit-identical.
func loadedIsShared(t *testing.T, runs qnnRuns, file, shared string, sharedQ float64) {
	const short = 2048
	loaded, loadedLog, loadedQ := runs.export("loaded", short, func(o *pkgexport.Options) { o.Calibration = file })
	t.Logf("quantize stage: %.1f s calibrated at %d in the process, %.1f s loaded from the file", sharedQ, short, loadedQ)
	assert.Contains(t, loadedLog, "--load-calibration "+file+" --", "the recipe passes the file to the launcher")
	assert.NotContains(t, loadedLog, "calibration rows served locally", "a window built from the file calibrates nothing")
	assert.NotContains(t, loadedLog, "--calib-window", "the file replaces the in-process calibration")
	kept := regexp.MustCompile(`qnn_launch: encodings calibrated at \d+ tokens loaded from .*`).FindString(loadedLog)
	require.NotEmpty(t, kept, "the launcher says it loaded the file")
	assert.Contains(t, kept, "4096x8 (the file's 2048x8)", "the RoPE tables are the window's own")
	t.Logf("%s", kept)

	c := compareQDQ(t, filepath.Dir(file), shared, loaded)
	t.Logf("in-process vs file: %d/%d nodes; activation encodings %d (%d identical, max relative scale difference %g); "+
		"weight encodings %d (%d identical, %d with identical values); %d constants",
		c.Nodes[0], c.Nodes[1], c.Activation.Count, c.Activation.Identical, c.Activation.MaxRelScale,
		c.Weight.Count, c.Weight.Identical, c.Weight.ValuesIdentical, len(c.Constants))
	require.True(t, c.SameGraph, "the same graph node for node: %s", c.FirstDifference)
	assert.Positive(t, c.Activation.Count)
	assert.Equal(t, c.Activation.Count, c.Activation.Identical, "every activation encoding bit-identical: %+v", c.Differences)
	assert.Equal(t, c.Weight.Count, c.Weight.Identical, "every weight encoding bit-identical")
	assert.Equal(t, c.Weight.Count, c.Weight.ValuesIdentical, "every quantized weight bit-identical")
	for _, k := range c.Constants {
		assert.True(t, k.Equal, "constant %s %v equal", k.Name, k.Shape)
	}
}

// refusedFiles gives the export a corrupted file and files made for another decoder, other
// weights or another graph, and another chip: each is the launcher's sentence, before
// llama.py builds anything.
func refusedFiles(t *testing.T, runs qnnRuns, file string) {
	const short = 2048
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	dir := filepath.Dir(file)
	corrupt, otherDecoder, otherGraph := filepath.Join(dir, "corrupt.pt"), filepath.Join(dir, "other-decoder.pt"), filepath.Join(dir, "other-graph.pt")
	require.NoError(t, os.WriteFile(corrupt, data[:len(data)/2], 0o644))
	// The same file, its header naming another decoder or other weights; and its sixth node
	// renamed, as a graph of another model would differ.
	edit := `import sys, torch
d = torch.load(sys.argv[1], weights_only=True)
d["decoder"] = "qwen3-0_6b"
torch.save(d, sys.argv[2])
d = torch.load(sys.argv[1], weights_only=True)
d["weights_sha256"] = "0" * 64
torch.save(d, sys.argv[4])
d = torch.load(sys.argv[1], weights_only=True)
name, chain = d["graph"]["activations"][5]
d["graph"]["activations"][5] = ("renamed", chain)
torch.save(d, sys.argv[3])
print(name)`
	otherWeights := filepath.Join(dir, "other-weights.pt")
	out, err := runPython(t, dir, nil, 2*time.Minute, "-c", edit, file, otherDecoder, otherGraph, otherWeights)
	require.NoError(t, err, "%s", out)
	sixth := strings.TrimSpace(lastLines(out, 1))
	for _, tc := range []struct {
		name, soc, file, want string
	}{
		{"corrupt", "SM8650", corrupt, "qnn_launch: the calibration file " + corrupt + " cannot be read (RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory): give the file a calibrate-only export wrote"},
		{"other-chip", "SM8750", file, "qnn_launch: the calibration file " + file + " was made for soc SM8650, and this run is for soc SM8750"},
		{"other-decoder", "SM8650", otherDecoder, "qnn_launch: the calibration file " + otherDecoder + " was made for decoder qwen3-0_6b, and this run is for decoder llama3_2-1b_instruct"},
		{"other-weights", "SM8650", otherWeights, "qnn_launch: the calibration file " + otherWeights + " was made for weights of sha256 " + strings.Repeat("0", 64) + ", and this run is for weights of sha256 "},
		{"other-graph", "SM8650", otherGraph, "qnn_launch: the calibration file " + otherGraph + " was calibrated on another graph: its nodes differ from this run's at position 5 (" + sixth + " here, renamed in the file; 172 here, 172 in the file)"},
	} {
		_, log, _, err := runs.start("refused-"+tc.name, short, func(o *pkgexport.Options) { o.SoC, o.Calibration = tc.soc, tc.file })
		var exit *run.ExitError
		require.ErrorAs(t, err, &exit, "%s: the launcher refuses\n%s", tc.name, lastLines(log, 20))
		assert.Contains(t, log, tc.want, tc.name)
		assert.NotContains(t, log, "Traceback", "%s: a sentence, not a traceback", tc.name)
		if tc.name != "other-graph" { // the node list is known once the graph is built
			assert.NotContains(t, log, "calling MultiModalManager::quantize", "%s: refused before llama.py builds anything", tc.name)
		}
	}
}
