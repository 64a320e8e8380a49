package realtool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
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
// RoPE tables, 4096 rows) the 4096-token graph's own, not the 2048-token graph's.
func TestQNNSharedCalibration(t *testing.T) {
	python(t)
	const window, short = 4096, 2048
	base := t.TempDir()
	src := metaOriginal(t, base)
	wrapper, _ := qnnPython(t, base)

	export := func(name string, calib int) (qdq, log string, quantize float64) {
		cfg, err := config.Default()
		require.NoError(t, err)
		cfg.Export.QNN.CalibWindow = calib
		work := filepath.Join(base, name)
		var logBuf bytes.Buffer
		start := time.Now()
		_, err = pkgexport.Run(context.Background(), pkgexport.Options{
			Config: cfg, Backend: "qnn", SoC: "SM8650", Model: src, ID: llamaID, Python: wrapper, Window: window,
			Out: filepath.Join(base, name+"-out"), Work: work, KeepWork: true, Log: &logBuf,
			Host: func(dir string) (run.HostFacts, error) { // as in TestQNNBeforeLowering: the compile's swap
				h, err := run.Host(dir)
				h.SwapTotalBytes += 64 << 30
				return h, err
			},
		})
		log = logBuf.String()
		t.Logf("%s: export --backend qnn --context %d: %v after %s", name, window, err, time.Since(start).Round(time.Second))
		var exit *run.ExitError
		require.ErrorAs(t, err, &exit, "the export fails in its tool, at the SDK\nlog (end):\n%s", lastLines(log, 60))
		rows := window // the calibration rows are cut at the window calibrated
		if calib > 0 {
			rows = calib
		}
		at := inOrder(t, log,
			"calling MultiModalManager::quantize",
			fmt.Sprintf("max_context_length %d", rows),
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

	own, ownLog, ownQ := export("own", 0)
	assert.NotContains(t, ownLog, "--calib-window", "calib_window 0: the window calibrates at its own length")
	shared, sharedLog, sharedQ := export("shared", short)
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

	out, err := runPython(t, base, nil, 3*time.Minute, vendorScript(t, "qdq_compare.py"), own, shared)
	require.NoError(t, err, "qdq_compare.py:\n%s", lastLines(out, 20))
	var c qdqComparison
	require.NoError(t, json.Unmarshal([]byte(lastLines(out, 1)), &c), "%s", out)
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
