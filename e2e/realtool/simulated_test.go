package realtool

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	pkgexport "github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// checkSimulated measures the QDQ program Qualcomm's script saved (program, built from
// the tiny Llama 3.2 at own) on the CPU over the fidelity text, as a QNN export does after
// llama.py (export.Simulation), against own's fp32 and against another model's (otherModel,
// the tiny Qwen3 taught replyB: other weights, seed and reply, a tokenizer trained on the same
// corpus with Qwen's special tokens; no second tiny Llama 3.2 is built for it). Both measures
// run the program and the fp32 model on the same tokens (the source folder's tokenizer), so
// against its own source the quantized program must mostly agree with fp32 and against the
// other model it must not: the figure measures the program, not the text.
func checkSimulated(t *testing.T, program, own string) {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	text, err := gate.LoadFidelityText("", cfg.Gate)
	require.NoError(t, err)
	var log bytes.Buffer
	sim := pkgexport.Simulation{Runner: drivers.Runner{Python: python(t), Log: &log}, Source: own, Program: program, Text: text,
		Window: cfg.Export.QNN.MaxContextLen}
	start := time.Now()
	f, err := sim.Measure(context.Background())
	require.NoError(t, err, "the simulated measure:\n%s", lastLines(log.String(), 20))
	t.Logf("own fp32 (%s): %s", time.Since(start).Round(time.Second), gate.Quality{Simulated: f}.SimulatedLine())
	assert.Equal(t, gate.QDQOnCPU, f.By)
	assert.Equal(t, min(text.Tokens, cfg.Export.QNN.MaxContextLen), f.Positions, "the text's tokens, bounded by the window")
	assert.Equal(t, text.ID, f.Text)

	sim.Source = otherModel(t)
	g, err := sim.Measure(context.Background())
	require.NoError(t, err, "the simulated measure against another model:\n%s", lastLines(log.String(), 20))
	t.Logf("other fp32: %s", gate.Quality{Simulated: g}.SimulatedLine())

	// Measured on the shared 2-core test machine (ExecuTorch 1.5.1, SM8650 recipe, 2,048
	// tokens of the fidelity text, one call of the calibration graph), the same in two runs:
	// against its own source 83.1% next-token agreement, mean KL 0.042 nats,
	// 21-52 s with the fp32 reference; against the other model 0.0%, mean KL 4.64 (0.8%,
	// 4.85 against a tiny Llama 3.2 taught replyB; docs/research/qnn-simulated-quality.md).
	assert.Greater(t, f.NextTokenAgreement, 0.6, "the QDQ program mostly predicts its own fp32's next token")
	assert.Less(t, f.MeanKL, 0.25, "and stays close to its distribution")
	assert.Less(t, g.NextTokenAgreement, 0.2, "another model's fp32 is not predicted")
	assert.Greater(t, g.MeanKL, 1.0, "nor its distribution")
}
