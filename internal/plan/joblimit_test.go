package plan_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestJobLimitSkipsQwen3OnQNN is issue 38's case with the seed's measured QNN times
// (pipeline.yaml's export_times) fitted as one power law, as plan did before the
// calibration was split out (calibration_times removed): Qwen3-1.7B's 8k, 16k and 32k QNN
// exports are predicted at 543, 1,093 and 2,198 minutes, past the 350-minute job limit, so
// plan skips them with the prediction and the limit in the reason, leaves them out of the
// matrix, and costs only the 2k and 4k jobs (two chips each).
func TestJobLimitSkipsQwen3OnQNN(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	cfg, err := config.Default()
	require.NoError(t, err)
	require.Equal(t, 350, cfg.Export.JobLimitMinutes)
	cfg.CalibrationTimes = nil
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "qnn")

	s, err := p.Select("qnn", "", "")
	require.NoError(t, err)
	const x16, x32 = "blacksmith-16vcpu-ubuntu-2404", "blacksmith-32vcpu-ubuntu-2404"
	wantWindows := []result.Window{{Window: 2048, Runner: x16, SwapGiB: 64}, {Window: 4096, Runner: x16, SwapGiB: 64}}
	over := func(minutes, runner string) string {
		return fmt.Sprintf("the export would take about %s minutes on %s (fitted from pipeline.yaml's export_times), over the 350-minute job limit (export.job_limit_minutes)", minutes, runner)
	}
	wantSkipped := []result.Skipped{
		{Window: 8192, Reason: over("543", x16)},
		{Window: 16384, Reason: over("1,093", x32)},
		{Window: 32768, Reason: over("2,198", x32)},
	}
	assert.Empty(t, cmp.Diff(wantWindows, s.Windows), "the matrix")
	assert.Empty(t, cmp.Diff(wantSkipped, s.Skipped), "the skipped windows")
	assert.Equal(t, []string{"SM8750", "SM8650"}, s.SoCs)

	bp := p.Backends[0]
	assert.Equal(t, 4, bp.Jobs, "2k and 4k, for two chips")
	assert.Equal(t, 2*(135+270), bp.Minutes)
	assert.InDelta(t, 2*(4.32+8.64), bp.USD, 1e-9)
	assert.Equal(t, []int{bp.Jobs, bp.Minutes}, []int{p.Jobs, p.Minutes}, "the plan's total is the backend's")

	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.Contains(t, text.String(), "skipped: "+over("543", x16)+"\n")
	assert.Contains(t, text.String(), "  export cost: 4 job(s), 810 runner minutes, $25.92\n")
	assert.NotContains(t, text.String(), "~543 min", "a skipped window is not priced as a job")
}

// TestJobLimitEdge holds one window's predicted minutes against the limit for every backend
// with a measured time: a job that ends at the limit is built and costed, one a minute
// longer is skipped, named, and costs nothing. The figures are flat (the same for every
// window), so every window a runner holds lands on the same side.
func TestJobLimitEdge(t *testing.T) {
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-0.6B", "main", nil)
	require.NoError(t, err)
	const limit = 350
	for _, backendName := range []string{"xnnpack", "vulkan", "qnn", "mediatek"} {
		for _, tc := range []struct {
			name    string
			seconds float64
			minutes int
			built   bool
		}{
			{"well under", 60 * (limit - 100), limit - 100, true},
			{"a minute under", 60 * (limit - 1), limit - 1, true},
			{"at the limit", 60 * limit, limit, true},
			{"a second over", 60*limit + 1, limit + 1, false},
			{"far over", 60 * 3 * limit, 3 * limit, false},
		} {
			t.Run(backendName+"/"+tc.name, func(t *testing.T) {
				cfg, err := config.Default()
				require.NoError(t, err)
				cfg.Export.JobLimitMinutes = limit
				cfg.ExportTimes = []config.ExportTime{{Backend: backendName, Flat: true, Seconds: tc.seconds, Source: "test"}}
				p := plan.Build(cfg, src, backendName)
				require.Len(t, p.Backends, 1)
				bp := p.Backends[0]
				require.True(t, bp.OK, bp.Reason)
				chips := max(len(bp.Targets), 1)
				s, err := p.Select(backendName, "", "")
				require.NoError(t, err)

				held, jobs := 0, 0
				for _, r := range bp.Rows {
					if r.Runner == "" {
						continue // no runner holds its memory: skipped before any time is asked
					}
					if strings.Contains(r.Skip, plan.TwinRule) {
						continue // MediaTek 512: no XNNPACK window of its size to decode on
					}
					held++
					assert.Equal(t, tc.minutes, r.ExportMinutes, r.Label)
					if tc.built {
						assert.Empty(t, r.Skip, r.Label)
						jobs += chips
						continue
					}
					assert.Equal(t, plan.OverJobLimit(tc.minutes, r.Runner, limit), r.Skip, r.Label)
					assert.Contains(t, s.Skipped, result.Skipped{Window: r.Window, Reason: r.Skip}, r.Label)
				}
				require.Positive(t, held, "some window of %s has a runner", backendName)
				assert.Len(t, s.Windows, jobs/chips, "the matrix")
				assert.Equal(t, jobs, bp.Jobs)
				assert.Equal(t, jobs*tc.minutes, bp.Minutes)
				if !tc.built {
					assert.Empty(t, s.Windows, "no window over the limit reaches the matrix")
					assert.Zero(t, bp.USD)
				}
			})
		}
	}
}

// TestNoMatrixOverTheJobLimit: for every model of the snapshot and every backend that takes
// it, with the committed pipeline.yaml (the seed's measured times), no window in the matrix
// is predicted past the job limit, and each window plan skips for time says so with its
// prediction; the costs add up the windows in the matrix only.
func TestNoMatrixOverTheJobLimit(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	limit := cfg.Export.JobLimitMinutes
	skippedForTime := 0
	for _, id := range snapshot.Models() {
		src, _, err := source.Open(context.Background(), id, "main", nil)
		require.NoError(t, err, id)
		p := plan.Build(cfg, src, "")
		for _, bp := range p.Backends {
			if !bp.OK || len(bp.Rows) == 0 {
				continue
			}
			s, err := p.Select(bp.Backend, "", "")
			require.NoError(t, err, "%s %s", id, bp.Backend)
			minutes := map[int]int{}
			for _, r := range bp.Rows {
				minutes[r.Window] = r.ExportMinutes
				if r.Skip == "" || r.ExportMinutes <= limit {
					continue
				}
				skippedForTime++
				assert.Contains(t, []string{plan.OverJobLimit(r.ExportMinutes, r.Runner, limit), plan.OverJobLimitSplit(r.ExportMinutes, r.Runner, limit)},
					r.Skip, "%s %s %s", id, bp.Backend, r.Label)
			}
			total := 0
			if c := bp.Calibrate; c != nil && len(s.Windows) > 0 {
				assert.LessOrEqual(t, c.Minutes, limit, "%s %s: the calibrate job", id, bp.Backend)
				total += c.Minutes * max(len(bp.Targets), 1)
			}
			for _, w := range s.Windows {
				assert.LessOrEqual(t, minutes[w.Window], limit, "%s %s: window %d is in the matrix", id, bp.Backend, w.Window)
				total += minutes[w.Window] * max(len(bp.Targets), 1)
			}
			assert.Equal(t, total, bp.Minutes, "%s %s: the cost is the matrix's", id, bp.Backend)
		}
	}
	assert.Positive(t, skippedForTime, "the seed's QNN times put some snapshot windows past the limit")
}

// TestQNNCalibrationPlans holds plan's QNN minutes per window to docs/research/
// qnn-calibration.md's predictions for issue 38, with the committed pipeline.yaml (the
// seed's times, the calibration split by calibration_times) and each way the recipe can
// calibrate: at each window's own length (calib_window 0), at 2k inside every window's job
// (calibrate_once off), and once per chip by the workflow's calibrate job (the default).
// Qwen3-0.6B's recipe searches with SeqMSE, Qwen3-1.7B's does not, so 1.7B calibrates at
// its own length whatever the settings. No window over the job limit is in the matrix.
func TestQNNCalibrationPlans(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	for _, tc := range []struct {
		name      string
		model     string
		calib     int
		once      bool
		minutes   []int // 2k to 32k; over the 350-minute limit: skipped
		calibrate int   // the calibrate job's minutes per chip, 0: none
	}{
		{"0.6B, own window", "Qwen/Qwen3-0.6B", 0, false, []int{50, 122, 399, 1477, 5692}, 0},
		{"0.6B, at 2k in each job", "Qwen/Qwen3-0.6B", 2048, false, []int{50, 54, 62, 91, 219}, 0},
		{"0.6B, once per chip", "Qwen/Qwen3-0.6B", 2048, true, []int{26, 30, 38, 67, 195}, 29},
		{"1.7B, own window", "Qwen/Qwen3-1.7B", 0, false, []int{70, 80, 101, 179, 527}, 0},
		{"1.7B, once per chip: no search, so its own", "Qwen/Qwen3-1.7B", 2048, true, []int{70, 80, 101, 179, 527}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Default()
			require.NoError(t, err)
			cfg.Export.QNN.CalibWindow, cfg.Export.QNN.CalibrateOnce = tc.calib, tc.once
			src, _, err := source.Open(context.Background(), tc.model, "main", nil)
			require.NoError(t, err)
			p := plan.Build(cfg, src, "qnn")
			bp := p.Backends[0]
			s, err := p.Select("qnn", "", "")
			require.NoError(t, err)
			var got, built []int
			for _, r := range bp.Rows {
				got = append(got, r.ExportMinutes)
				if r.ExportMinutes > cfg.Export.JobLimitMinutes {
					assert.Equal(t, plan.OverJobLimitSplit(r.ExportMinutes, r.Runner, cfg.Export.JobLimitMinutes), r.Skip, r.Label)
					continue
				}
				assert.Empty(t, r.Skip, r.Label)
				built = append(built, r.Window)
			}
			assert.Equal(t, tc.minutes, got)
			var matrix []int
			for _, w := range s.Windows {
				matrix = append(matrix, w.Window)
			}
			assert.Equal(t, built, matrix, "the matrix is the windows within the limit")
			if tc.calibrate == 0 {
				assert.Nil(t, bp.Calibrate)
				return
			}
			require.NotNil(t, bp.Calibrate)
			assert.Equal(t, plan.CalibrateJob{Window: 2048, Runner: bp.Rows[0].Runner, SwapGiB: bp.Rows[0].SwapGiB, Minutes: tc.calibrate, USD: bp.Calibrate.USD}, *bp.Calibrate)
			assert.Equal(t, 2*(len(built)+1), bp.Jobs, "each window and the calibration, on two chips")
		})
	}
}
