package drivers

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/gate"
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

	refRes, _, err := r.GateReference(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: fp32Path}, Prompt: prompt, Rows: rows})
	require.NoError(t, err)
	ref := refRes.Rows
	assert.Nil(t, refRes.Fidelity, "no fidelity text asked, none measured")
	gotRes, _, err := r.GateMeasure(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: exportPath}, Prompt: prompt, Rows: rows}, ref, nil)
	require.NoError(t, err)
	got := gotRes.Rows

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
		map[string]gate.Token{"q": {Token: 99}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 'q': fp32 token 99 is outside the export's vocabulary of 13")

	_, _, err = r.GateReference(ctx, GateProbe{Model: model, Rows: []GateRow{{Question: "q", User: "hello"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 'q' has no token ids and the plan names no tokenizer")

	_, _, err = r.GateReference(ctx, GateProbe{Model: GateModel{Kind: "onnx", Path: path}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model kind 'onnx' is not hf, pte, torchscript or qdq")

	qdq := GateModel{Kind: "qdq", Path: path}
	_, _, err = r.GateMeasure(ctx, GateProbe{Model: qdq, Rows: []GateRow{{Question: "q", TokenIDs: []int{1}}}}, map[string]gate.Token{"q": {Token: 1}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a QDQ program reads only the fidelity text: its plan has 1 gate rows")

	_, _, err = r.GateMeasure(ctx, GateProbe{Model: qdq}, nil, &gate.FidelityReference{Tokens: []int{1}, TopK: 1,
		Positions: []gate.RefPosition{{IDs: []int{1}, LogP: []float64{0}}}})
	require.Error(t, err)
	if exec.Command(py, "-c", "import torchao").Run() == nil {
		assert.Contains(t, err.Error(), path+" is not a saved torch.export program (", "a TorchScript file is not a QDQ program")
	} else { // a QDQ program's ops are torchao's: without it the driver cannot run, and says so
		assert.Contains(t, err.Error(), "has no module torchao")
	}

	_, _, err = r.GateReference(ctx, GateProbe{Model: model, Fidelity: &GateFidelity{Text: "a text", Tokens: 4, TopK: 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the fidelity text has no token ids and the plan names no tokenizer")

	_, _, err = r.GateReference(ctx, GateProbe{Model: model, Fidelity: &GateFidelity{TokenIDs: []int{1, 2, 3}, Tokens: 5, TopK: 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the fidelity text has 3 tokens, fewer than the 5 asked")

	_, _, err = r.GateReference(ctx, GateProbe{Model: model, Fidelity: &GateFidelity{TokenIDs: []int{1, 2, 3}, TopK: 14}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fidelity top_k 14 is more than the vocabulary of 13")

	bad := &gate.FidelityReference{TopK: 1, Tokens: []int{1}, Positions: []gate.RefPosition{{IDs: []int{40}, LogP: []float64{0}}}}
	_, _, err = r.GateMeasure(ctx, GateProbe{Model: model}, nil, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fidelity position 0: fp32's tokens fall outside the export's vocabulary of 13")
}

// TestGateProbeFidelity runs the fidelity text's part of gate_probe.py on the two tiny
// models: every position's top-k, log-probabilities and rest mass of the reference, and the
// export's distribution on those buckets, against the softmax computed here; then
// gate.CompareFidelity on the driver's numbers agrees with the same figures computed from
// the full distributions here (the bucketed KL never above the full KL).
func TestGateProbeFidelity(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	var fp32W, exportW tinyWeights
	fp32Path, exportPath := filepath.Join(dir, "fp32.pt"), filepath.Join(dir, "export.pt")
	pyJSON(t, py, &fp32W, filepath.Join("testdata", "gate_tiny.py"), fp32Path, "1")
	pyJSON(t, py, &exportW, filepath.Join("testdata", "gate_tiny.py"), exportPath, "2")
	r := Runner{Python: py, Dir: filepath.Join(dir, "drivers")}
	ctx := context.Background()
	text := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}
	const k, n = 4, 12

	ref, _, err := r.GateReference(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: fp32Path},
		Fidelity: &GateFidelity{TokenIDs: text, Tokens: n, TopK: k}})
	require.NoError(t, err)
	require.NotNil(t, ref.Fidelity)
	f := ref.Fidelity
	assert.Equal(t, text[:n], f.Tokens, "the first n tokens are fed")
	assert.Equal(t, k, f.TopK)
	require.Len(t, f.Positions, n)
	for i, pos := range f.Positions {
		p := fp32W.probs(text[:i+1])
		assert.Equal(t, argmax(p), pos.IDs[0], "position %d: fp32's argmax first", i)
		kept := 0.0
		for j, id := range pos.IDs {
			assert.InDelta(t, math.Log(p[id]), pos.LogP[j], 1e-6, "position %d token %d", i, id)
			if j > 0 {
				assert.GreaterOrEqual(t, pos.LogP[j-1], pos.LogP[j], "position %d: most probable first", i)
			}
			kept += p[id]
		}
		assert.InDelta(t, 1-kept, pos.Rest, 1e-6, "position %d: the rest's mass", i)
	}

	got, _, err := r.GateMeasure(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: exportPath}}, nil, f)
	require.NoError(t, err)
	require.NotNil(t, got.Fidelity)
	require.Len(t, got.Fidelity.Positions, n)
	agreed, fullKL, bucketKL := 0, 0.0, 0.0
	for i, pos := range got.Fidelity.Positions {
		pf, pe := fp32W.probs(text[:i+1]), exportW.probs(text[:i+1])
		assert.Equal(t, argmax(pe), pos.Token, "position %d: the export's argmax", i)
		kept := 0.0
		for j, id := range f.Positions[i].IDs {
			assert.InDelta(t, math.Log(pe[id]), pos.LogP[j], 1e-6, "position %d token %d", i, id)
			kept += pe[id]
		}
		assert.InDelta(t, 1-kept, pos.Rest, 1e-6, "position %d: the export's rest", i)
		if argmax(pe) == argmax(pf) {
			agreed++
		}
		var kl float64
		for v := range pf {
			kl += pf[v] * math.Log(pf[v]/pe[v])
		}
		fullKL += kl / n
		bucketKL += gate.BucketKL(f.Positions[i].LogP, f.Positions[i].Rest, pos.LogP, pos.Rest) / n
	}
	fid, err := gate.CompareFidelity(*f, *got.Fidelity, 0)
	require.NoError(t, err)
	assert.Equal(t, agreed, fid.Agreed)
	assert.InDelta(t, float64(agreed)/n, fid.NextTokenAgreement, 1e-12)
	assert.InDelta(t, bucketKL, fid.MeanKL, 1e-9)
	assert.Positive(t, fid.MeanKL, "two random models differ")
	assert.LessOrEqual(t, fid.MeanKL, fullKL+1e-6, "the bucketed KL is a lower bound of the full KL")

	same, _, err := r.GateMeasure(ctx, GateProbe{Model: GateModel{Kind: "torchscript", Path: fp32Path}}, nil, f)
	require.NoError(t, err)
	fid, err = gate.CompareFidelity(*f, *same.Fidelity, 0)
	require.NoError(t, err)
	assert.Equal(t, 1.0, fid.NextTokenAgreement, "fp32 against itself")
	assert.InDelta(t, 0, fid.MeanKL, 1e-12, "fp32 against itself")
}

// TestGateComplete: a driver that drops or adds a row is an error, not a short verdict.
func TestGateComplete(t *testing.T) {
	rows := []GateRow{{Question: "a"}, {Question: "b"}}
	assert.NoError(t, complete(rows, map[string]int{"a": 1, "b": 2}))
	assert.EqualError(t, complete(rows, map[string]int{"a": 1}), `gate_probe.py returned no result for row "b"`)
	assert.EqualError(t, complete(rows, map[string]int{"a": 1, "b": 2, "c": 3}), "gate_probe.py returned 3 rows for the 2 it was given")
}
