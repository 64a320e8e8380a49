package drivers

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/gate"
)

// tinyWeights is testdata/gate_tiny.py's model: logits = W tanh(mean E[ids]) + b.
type tinyWeights struct {
	Emb [][]float64 `json:"emb"`
	W   [][]float64 `json:"w"`
	B   []float64   `json:"b"`
}

// probs computes the model's softmax here, independently of torch.
func (m tinyWeights) probs(ids []int) []float64 {
	h := make([]float64, len(m.Emb[0]))
	for _, id := range ids {
		for j := range h {
			h[j] += m.Emb[id][j] / float64(len(ids))
		}
	}
	for j := range h {
		h[j] = math.Tanh(h[j])
	}
	logits := make([]float64, len(m.B))
	top := math.Inf(-1)
	for i := range logits {
		logits[i] = m.B[i]
		for j := range h {
			logits[i] += m.W[i][j] * h[j]
		}
		top = math.Max(top, logits[i])
	}
	var sum float64
	for i := range logits {
		logits[i] = math.Exp(logits[i] - top)
		sum += logits[i]
	}
	for i := range logits {
		logits[i] /= sum
	}
	return logits
}

func argmax(p []float64) int {
	best := 0
	for i := range p {
		if p[i] > p[best] {
			best = i
		}
	}
	return best
}

// TestGateProbeArithmetic runs gate_probe.py with Debian's torch on two tiny random models
// (the "fp32" source and the "export") over the configured gate rows, and compares the
// driver's argmax and probabilities with the ones computed here from the same weights.
func TestGateProbeArithmetic(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	var fp32W, exportW tinyWeights
	fp32Path, exportPath := filepath.Join(dir, "fp32.pt"), filepath.Join(dir, "export.pt")
	pyJSON(t, py, &fp32W, filepath.Join("testdata", "gate_tiny.py"), fp32Path, "1")
	pyJSON(t, py, &exportW, filepath.Join("testdata", "gate_tiny.py"), exportPath, "2")

	c, err := config.Default()
	require.NoError(t, err)
	rows := GateRowsFrom(gate.RowsFrom(c.Gate))
	require.Len(t, rows, 16)
	for i := range rows {
		rows[i].TokenIDs = []int{i % 13, (3*i + 1) % 13, (5*i + 2) % 13, (7 * i) % 13}
	}
	prompt, _, err := gate.LoadPrompt("")
	require.NoError(t, err)
	r := Runner{Python: py, Dir: filepath.Join(dir, "drivers")}
	ctx := context.Background()

	ref, _, err := r.GateReference(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: fp32Path}, Prompt: prompt, Rows: rows})
	require.NoError(t, err)
	got, _, err := r.GateMeasure(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: exportPath}, Prompt: prompt, Rows: rows}, ref)
	require.NoError(t, err)

	disagree := 0
	for _, row := range rows {
		pf, pe := fp32W.probs(row.TokenIDs), exportW.probs(row.TokenIDs)
		want := argmax(pf)
		require.Contains(t, ref, row.Question)
		assert.Equal(t, want, ref[row.Question].Token, row.Question)
		assert.InDelta(t, pf[want], ref[row.Question].P, 1e-5, row.Question)
		assert.Equal(t, argmax(pe), got[row.Question].Token, row.Question)
		assert.InDelta(t, pe[want], got[row.Question].P, 1e-5, row.Question)
		if argmax(pe) != want {
			disagree++
		}
	}
	assert.Positive(t, disagree, "two random models should disagree somewhere, or measure could be echoing the reference")
}

func TestGateProbeRefusals(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.pt")
	pyJSON(t, py, nil, filepath.Join("testdata", "gate_tiny.py"), path, "1")
	r := Runner{Python: py, Dir: filepath.Join(dir, "drivers")}
	ctx := context.Background()
	model := GateModel{Kind: "torchscript", Path: path}

	_, _, err := r.GateMeasure(ctx, GateProbe{Model: model, Rows: []GateRow{{Question: "q", TokenIDs: []int{1}}}},
		map[string]gate.Token{"q": {Token: 99}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 'q': fp32 token 99 is outside the export's vocabulary of 13")

	_, _, err = r.GateReference(ctx, GateProbe{Model: model, Rows: []GateRow{{Question: "q", User: "hello"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 'q' has no token ids and the plan names no tokenizer")

	_, _, err = r.GateReference(ctx, GateProbe{Model: GateModel{Kind: "onnx", Path: path}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model kind 'onnx' is not hf, pte or torchscript")
}

// TestGateComplete: a driver that drops or adds a row is an error, not a short verdict.
func TestGateComplete(t *testing.T) {
	rows := []GateRow{{Question: "a"}, {Question: "b"}}
	assert.NoError(t, complete(rows, map[string]int{"a": 1, "b": 2}))
	assert.EqualError(t, complete(rows, map[string]int{"a": 1}), `gate_probe.py returned no result for row "b"`)
	assert.EqualError(t, complete(rows, map[string]int{"a": 1, "b": 2, "c": 3}), "gate_probe.py returned 3 rows for the 2 it was given")
}
