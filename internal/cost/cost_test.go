package cost

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// TestFitTheSeedsTimes fits the embedded measurements: QNN's growth comes from Qwen3-0.6B at
// 2k (two chips) and 4k, and the fit gives back each measured time within the spread of the
// two 2k runs; XNNPACK is flat at the middle of the seed's 10 to 12 minutes.
func TestFitTheSeedsTimes(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	fits := FitAll(cfg.ExportTimes)
	qnn := fits["qnn"]
	require.False(t, qnn.Flat)
	// 2k: geometric mean of 2434 and 3637; 4k: 5987
	want := math.Log(5987/math.Sqrt(2434*3637)) / math.Log(2)
	assert.InDelta(t, want, qnn.Growth, 1e-9)
	const q06 = 751632384
	assert.InDelta(t, math.Sqrt(2434*3637), qnn.Seconds(q06, 2048), 0.5)
	assert.InDelta(t, 5987, qnn.Seconds(q06, 4096), 0.5)
	xnn := fits["xnnpack"]
	require.True(t, xnn.Flat)
	assert.InDelta(t, math.Sqrt(600*720), xnn.Seconds(4e9, 32768), 1e-6)
	assert.Contains(t, fits, "mediatek")
	assert.Contains(t, fits, "vulkan")
}

// TestFitCases: the exponent from a model at two windows, the base from every point, and
// minutes rounded up with their price.
func TestFitCases(t *testing.T) {
	times := []config.ExportTime{
		{Backend: "b", Model: "m", Params: 1e9, Window: 2048, Seconds: 100, Source: "x"},
		{Backend: "b", Model: "m", Params: 1e9, Window: 8192, Seconds: 1600, Source: "x"},
		{Backend: "b", Model: "n", Params: 2e9, Window: 2048, Seconds: 200, Source: "x"},
	}
	f := FitAll(times)["b"]
	assert.InDelta(t, 2.0, f.Growth, 1e-9)
	assert.InDelta(t, 100, f.SecondsPerGParam, 1e-9)
	assert.Equal(t, 3, f.Points)
	arm := &config.Runner{USDPerMinute: 0.01}
	job, ok := Estimate(map[string]Fit{"b": f}, "b", 1e9, 4096, arm)
	require.True(t, ok)
	assert.Equal(t, Job{Minutes: 7, USD: 0.07}, job, "400 s is 6.7 minutes, billed as 7")
	_, ok = Estimate(map[string]Fit{"b": f}, "c", 1e9, 4096, arm)
	assert.False(t, ok, "no measurement, no estimate")
}

// TestEstimateWholeMinutes: a flat time measured at whole minutes is billed those minutes,
// though the fit's exp(log(x)) round trip can put it a hair above (15000 s at 250 minutes,
// not 251); a second past a whole minute is billed the next one.
func TestEstimateWholeMinutes(t *testing.T) {
	arm := &config.Runner{USDPerMinute: 0.01}
	for _, tc := range []struct {
		seconds float64
		minutes int
	}{{60, 1}, {600, 10}, {15000, 250}, {20940, 349}, {21000, 350}, {21001, 351}, {63000, 1050}, {59.5, 1}} {
		fits := FitAll([]config.ExportTime{{Backend: "b", Flat: true, Seconds: tc.seconds, Source: "x"}})
		job, ok := Estimate(fits, "b", 1e9, 32768, arm)
		require.True(t, ok)
		assert.Equal(t, tc.minutes, job.Minutes, "%g s", tc.seconds)
	}
}
