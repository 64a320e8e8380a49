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
// two 2k runs.
func TestFitTheSeedsTimes(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	fits := FitAll(cfg.ExportTimes)
	qnn := fits["qnn"]
	require.False(t, qnn.Flat)
	// 2k: geometric mean of 2434 and 3637; 4k: 5987
	want := math.Log(5987/math.Sqrt(2434*3637)) / math.Log(2)
	assert.InDelta(t, want, qnn.Growth, 1e-9)
	assert.Zero(t, qnn.FixedSeconds, "one model measured: proportional to the parameters")
	const q06 = 751632384
	assert.InDelta(t, math.Sqrt(2434*3637), qnn.Seconds(q06, 2048), 0.5)
	assert.InDelta(t, 5987, qnn.Seconds(q06, 4096), 0.5)
	assert.Contains(t, fits, "mediatek")
}

// TestFitXNNPACKByMeasurement pins the XNNPACK fit to the exports it came from (issue 51's
// full-size shapes on a 2-core host, pipeline.yaml's export_times): the window's exponent
// is SmolLM2-135M's 716 s at 2k against 954 s at 8k; the line in the parameters passes
// through the measurements' mean and gives back each within 30% (the two locks' exports of
// one size differ by that much); host_scale 0.68 puts Qwen3-0.6B at 2k inside the seed's
// 10-12 minutes on the runner; and the time grows with both the model and the window.
func TestFitXNNPACKByMeasurement(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	fits := FitAll(cfg.ExportTimes)
	x := fits["xnnpack"]
	require.False(t, x.Flat)
	assert.InDelta(t, math.Log(954.0/716)/math.Log(4), x.Growth, 1e-9)
	assert.Positive(t, x.FixedSeconds, "a fixed part: 135M took 716 s where 0.5B took 1,184 s")
	var measured []config.ExportTime
	for _, m := range cfg.ExportTimes {
		if m.Backend == "xnnpack" && m.Route == "" {
			measured = append(measured, m)
		}
	}
	require.Len(t, measured, 5)
	sumFit, sumMeasured := 0.0, 0.0
	for _, m := range measured {
		got := x.Seconds(m.Params, m.Window)
		assert.InEpsilon(t, m.RunnerSeconds(), got, 0.30, "%s at %d", m.Model, m.Window)
		sumFit += got / math.Pow(float64(m.Window)/2048, x.Growth)
		sumMeasured += m.RunnerSeconds() / math.Pow(float64(m.Window)/2048, x.Growth)
	}
	assert.InDelta(t, sumMeasured, sumFit, 1e-6, "least squares: the line passes through the mean")
	const q06, smol, smol3 = 751632384, 134515008, 3075098624
	assert.InDelta(t, 660, x.Seconds(q06, 2048), 60, "the seed: XNNPACK exports take about 10-12 minutes")
	assert.Less(t, x.Seconds(smol, 2048), x.Seconds(q06, 2048))
	assert.Less(t, x.Seconds(q06, 2048), x.Seconds(smol3, 2048))
	assert.Less(t, x.Seconds(smol3, 2048), x.Seconds(smol3, 32768))

	opt, ok := For(fits, "xnnpack", "optimum-executorch")
	require.True(t, ok)
	assert.InDelta(t, 698*0.68, opt.Seconds(268065920, 2048), 1e-6, "one optimum export: XNNPACK's line scaled through it")
	assert.InDelta(t, opt.FixedSeconds/opt.SecondsPerGParam, x.FixedSeconds/x.SecondsPerGParam, 1e-9)
	same, ok := For(fits, "xnnpack", "export_llm")
	require.True(t, ok)
	assert.Equal(t, x, same, "a route with no measurement of its own takes the backend's fit")
	v := fits["vulkan"]
	assert.Equal(t, "xnnpack", v.Like)
	assert.InDelta(t, x.Seconds(q06, 8192), v.Seconds(q06, 8192), 1e-9, "Vulkan borrows XNNPACK's fit")
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
	job, ok := Estimate(map[string]Fit{"b": f}, "b", "", 1e9, 4096, arm)
	require.True(t, ok)
	assert.Equal(t, Job{Minutes: 7, USD: 0.07}, job, "400 s is 6.7 minutes, billed as 7")
	_, ok = Estimate(map[string]Fit{"b": f}, "c", "", 1e9, 4096, arm)
	assert.False(t, ok, "no measurement, no estimate")
}

// TestFitLines: two sizes give a line with a fixed part; a line that would fall with the
// parameters (or start below zero) is not believed, and the fit stays proportional.
func TestFitLines(t *testing.T) {
	for _, tc := range []struct {
		name              string
		small, large      float64
		fixed, perBillion float64
	}{
		{"rising with a fixed part", 300, 500, 100, 200},
		{"falling", 500, 300, 0, math.Sqrt(500 / 1.0 * 300 / 2.0)},
		{"through below zero", 100, 500, 0, math.Sqrt(100 * 250.0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := FitAll([]config.ExportTime{
				{Backend: "b", Model: "s", Params: 1e9, Window: 2048, Seconds: tc.small, Source: "x"},
				{Backend: "b", Model: "l", Params: 2e9, Window: 2048, Seconds: tc.large, Source: "x"},
			})["b"]
			assert.InDelta(t, tc.fixed, f.FixedSeconds, 1e-9)
			assert.InDelta(t, tc.perBillion, f.SecondsPerGParam, 1e-9)
		})
	}
}

// TestHostScale: a time measured off the runner counts at its scale, and a report of the
// backend itself replaces a borrowed fit.
func TestHostScale(t *testing.T) {
	fits := FitAll([]config.ExportTime{
		{Backend: "b", Model: "m", Params: 1e9, Window: 2048, Seconds: 1000, HostScale: 0.5, Source: "x"},
		{Backend: "c", Like: "b", Source: "x"},
		{Backend: "d", Like: "b", Source: "x"},
		{Backend: "d", Model: "m", Params: 1e9, Window: 2048, Seconds: 70, Source: "report"},
	})
	assert.InDelta(t, 500, fits["b"].Seconds(1e9, 2048), 1e-9)
	assert.InDelta(t, 500, fits["c"].Seconds(1e9, 2048), 1e-9)
	assert.InDelta(t, 70, fits["d"].Seconds(1e9, 2048), 1e-9)
	assert.Empty(t, fits["d"].Like)
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
		job, ok := Estimate(fits, "b", "", 1e9, 32768, arm)
		require.True(t, ok)
		assert.Equal(t, tc.minutes, job.Minutes, "%g s", tc.seconds)
	}
}
