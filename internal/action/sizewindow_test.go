package action

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	exeexpo "github.com/experimentalmachines/exe-expo"
	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestSizeWindow writes what plan's result says, and takes plan's verdict and reason as
// its own; the picking itself is plan.Select's (internal/plan TestSelect).
func TestSizeWindow(t *testing.T) {
	built := []result.Window{{Window: 2048, Runner: "blacksmith-16vcpu-ubuntu-2404", SwapGiB: 64}, {Window: 4096, Runner: "blacksmith-32vcpu-ubuntu-2404", SwapGiB: 96}}
	builtJSON := `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64},{"window":4096,"runner":"blacksmith-32vcpu-ubuntu-2404","swap_gib":96}]`
	skipped := []result.Skipped{{Window: 8192, Reason: "needs about 300.0 GiB of memory"}}
	skippedJSON := `[{"window":8192,"reason":"needs about 300.0 GiB of memory"}]`
	for _, tc := range []struct {
		name    string
		inputs  map[string]string
		fake    fakeCLI
		code    int
		args    []string
		outputs map[string]string
		err     string
	}{
		{"every window and chip", nil, fakeCLI{outputs: result.Outputs{Windows: built, Skipped: skipped, SoCs: []string{"MT6991", "MT6989"}}}, 0,
			[]string{"plan", "org/M-1B", "--backend", "mediatek", "--json"},
			map[string]string{"windows": builtJSON, "skipped": skippedJSON, "socs": `["MT6991","MT6989"]`,
				"matrix": `{"entry":` + builtJSON + `,"soc":["MT6991","MT6989"]}`, "calibrate": `[]`}, ""},
		{"the inputs reach plan as flags", map[string]string{"contexts": "8192", "socs": "MT6989", "revision": "v1"}, fakeCLI{outputs: result.Outputs{Skipped: skipped, SoCs: []string{"MT6989"}}}, 0,
			[]string{"plan", "org/M-1B", "--backend", "mediatek", "--json", "--revision", "v1", "--contexts", "8192", "--socs", "MT6989"},
			map[string]string{"windows": `[]`, "skipped": skippedJSON, "socs": `["MT6989"]`, "matrix": `{"entry":[],"soc":["MT6989"]}`, "calibrate": `[]`}, ""},
		{"no chips: no soc dimension", nil, fakeCLI{outputs: result.Outputs{Windows: built[:1]}}, 0,
			[]string{"plan", "org/M-1B", "--backend", "mediatek", "--json"},
			map[string]string{"windows": `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]`, "skipped": `[]`, "socs": `[]`,
				"matrix": `{"entry":[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]}`, "calibrate": `[]`}, ""},
		{"a calibrate job", nil, fakeCLI{outputs: result.Outputs{Windows: built[:1], SoCs: []string{"SM8750"}, Calibrate: built[:1]}}, 0,
			[]string{"plan", "org/M-1B", "--backend", "mediatek", "--json"},
			map[string]string{"windows": `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]`, "skipped": `[]`, "socs": `["SM8750"]`,
				"matrix":    `{"entry":[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}],"soc":["SM8750"]}`,
				"calibrate": `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]`}, ""},
		{"not eligible: exit 3 with plan's reason", nil, fakeCLI{code: 3, reason: "plan: org/M-1B is not eligible: named size 8B is above 4B"}, 3, nil, nil,
			"plan: org/M-1B is not eligible: named size 8B is above 4B"},
		{"the backend does not take the model: exit 3 too", nil, fakeCLI{code: 3, reason: "plan: MediaTek NeuroPilot does not take org/M-1B: no model definition"}, 3, nil, nil,
			"plan: MediaTek NeuroPilot does not take org/M-1B: no model definition"},
		{"a window the backend does not have", map[string]string{"contexts": "3000"}, fakeCLI{code: 2, reason: "plan: contexts: 3000 is not among MediaTek NeuroPilot's windows (2048, 4096, 8192)"}, 2, nil, nil,
			"plan: contexts: 3000 is not among MediaTek NeuroPilot's windows (2048, 4096, 8192)"},
		{"plan left no result", nil, fakeCLI{noResult: true}, 2, nil, nil,
			"exe-expo exited with code 0 and left no result to say why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs := map[string]string{"model-id": "org/M-1B", "backend": "mediatek"}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			s := newStep(t, inputs)
			code := SizeWindow(s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			if tc.args != nil {
				assert.Equal(t, [][]string{tc.args}, tc.fake.calls)
			}
			if tc.err != "" {
				assert.True(t, strings.HasPrefix(s.log.String(), "::error title=size-window::"+tc.err), "log: %s", s.log.String())
				assert.Empty(t, s.outputs(t))
				return
			}
			assert.Empty(t, s.log.String(), "plan's JSON is read, not printed")
			assert.Equal(t, tc.outputs, s.outputs(t))
		})
	}
}

// TestSizeWindowPassesTheCLIsMasks: plan's JSON stays off the log, but the ::add-mask::
// lines the CLI writes for the job's tokens reach the runner.
func TestSizeWindowPassesTheCLIsMasks(t *testing.T) {
	s := newStep(t, map[string]string{"model-id": "org/M-1B", "backend": "mediatek"})
	fake := &fakeCLI{outputs: result.Outputs{Windows: []result.Window{{Window: 2048, Runner: "r", SwapGiB: 1}}}, answer: func(_ []string, stdout, _ io.Writer) int {
		_, _ = io.WriteString(stdout, "::add-mask::hf_job")
		_, _ = io.WriteString(stdout, "\n::add-mask::ghs_job\n{\"plan\": 1}\n::warning::partial")
		return 0
	}}
	require.Equal(t, 0, SizeWindow(s.envWith(fake.run)))
	assert.Equal(t, "::add-mask::hf_job\n::add-mask::ghs_job\n", s.log.String())
	assert.Contains(t, s.outputs(t)["windows"], `"window":2048`)
}

// TestSizeWindowRunsPlan runs the real CLI offline on a snapshot model: MediaTek builds
// Qwen3-4B's short windows and skips the long ones for memory. The expected rows come from
// the plan package itself, so the test checks the plumbing (the CLI's JSON, the picking and
// the output encoding), not sizing figures that move with the sizing model.
func TestSizeWindowRunsPlan(t *testing.T) {
	cliSummary := filepath.Join(t.TempDir(), "cli-summary")
	offlinePlan(t, cliSummary) // the CLI writes its own plan summary there

	cfg, err := config.Load("")
	require.NoError(t, err)
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-4B", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "mediatek")
	require.Len(t, p.Backends, 1)
	var want plan.Selection
	for _, row := range p.Backends[0].Rows {
		if row.Window != 2048 && row.Window != 16384 {
			continue
		}
		if row.Skip != "" {
			want.Skipped = append(want.Skipped, result.Skipped{Window: row.Window, Reason: row.Skip})
		} else {
			want.Windows = append(want.Windows, result.Window{Window: row.Window, Runner: row.Runner, SwapGiB: row.SwapGiB})
		}
	}
	require.Len(t, want.Windows, 1, "Qwen3-4B's MediaTek 2k window should have a runner")
	require.Len(t, want.Skipped, 1, "Qwen3-4B's MediaTek 16k window should be skipped for memory")
	require.Equal(t, cfg.Export.MediaTek.SoCs, p.Backends[0].Targets)

	s := newStep(t, map[string]string{"model-id": "Qwen/Qwen3-4B", "backend": "mediatek", "contexts": "2048,16384"})
	code := SizeWindow(s.envWith(RunCLI))
	require.Equal(t, cli.ExitOK, code, "log: %s\nstderr: %s", s.log.String(), s.stderr.String())

	out := s.outputs(t)
	var windows []result.Window
	var skipped []result.Skipped
	var socs []string
	require.NoError(t, json.Unmarshal([]byte(out["windows"]), &windows))
	require.NoError(t, json.Unmarshal([]byte(out["skipped"]), &skipped))
	require.NoError(t, json.Unmarshal([]byte(out["socs"]), &socs))
	assert.Equal(t, want.Windows, windows)
	assert.Equal(t, want.Skipped, skipped)
	assert.Equal(t, cfg.Export.MediaTek.SoCs, socs)

	data, err := os.ReadFile(cliSummary)
	require.NoError(t, err)
	assert.Contains(t, string(data), "### plan Qwen/Qwen3-4B: eligible")
	assert.Contains(t, string(data), "| 16k (16384) |", "plan writes the sizing table of the windows asked for")
}

// TestSizeWindowSkipsPastTheJobLimit runs the real CLI offline on issue 38's case: with the
// seed's measured QNN times and the calibration split out (calibration_times), Qwen3-1.7B's
// 32k export is predicted past the job limit (pipeline.yaml's export.job_limit_minutes), so
// the matrix holds 2k to 16k and the skipped output names the prediction and the limit;
// the step passes. (With one power law, before the split, 8k and 16k were over too:
// internal/plan TestJobLimitSkipsQwen3OnQNN.)
func TestSizeWindowSkipsPastTheJobLimit(t *testing.T) {
	offlinePlan(t, filepath.Join(t.TempDir(), "cli-summary"))
	cfg, err := config.Load("")
	require.NoError(t, err)

	s := newStep(t, map[string]string{"model-id": "Qwen/Qwen3-1.7B", "backend": "qnn"})
	require.Equal(t, cli.ExitOK, SizeWindow(s.envWith(RunCLI)), "log: %s\nstderr: %s", s.log.String(), s.stderr.String())
	out := s.outputs(t)
	var m struct {
		Entry []result.Window `json:"entry"`
		SoC   []string        `json:"soc"`
	}
	require.NoError(t, json.Unmarshal([]byte(out["matrix"]), &m))
	var skipped []result.Skipped
	require.NoError(t, json.Unmarshal([]byte(out["skipped"]), &skipped))

	var built []int
	for _, w := range m.Entry {
		built = append(built, w.Window)
	}
	assert.Equal(t, []int{2048, 4096, 8192, 16384}, built, "the matrix")
	assert.Equal(t, "[]", out["calibrate"], "Qwen3-1.7B's recipe has no SeqMSE search: each window calibrates in its own job")
	assert.Equal(t, cfg.Export.QNN.SoCs, m.SoC)
	want := map[int]string{32768: "527"}
	require.Len(t, skipped, len(want))
	for _, sk := range skipped {
		minutes, ok := want[sk.Window]
		require.True(t, ok, "window %d skipped", sk.Window)
		assert.Contains(t, sk.Reason, "the export would take about "+minutes+" minutes on blacksmith-")
		assert.Contains(t, sk.Reason, "over the 350-minute job limit (export.job_limit_minutes)")
	}
}

// TestSizeWindowCalibratesOnce: Qwen3-0.6B's QNN recipe searches with SeqMSE, so with
// calibrate_once the plan has a calibrate job at export.qnn.calib_window, and the step
// says where, and on which runner.
func TestSizeWindowCalibratesOnce(t *testing.T) {
	offlinePlan(t, filepath.Join(t.TempDir(), "cli-summary"))
	cfg, err := config.Load("")
	require.NoError(t, err)
	require.True(t, cfg.Export.QNN.CalibrateOnce)
	s := newStep(t, map[string]string{"model-id": "Qwen/Qwen3-0.6B", "backend": "qnn"})
	require.Equal(t, cli.ExitOK, SizeWindow(s.envWith(RunCLI)), "log: %s\nstderr: %s", s.log.String(), s.stderr.String())
	out := s.outputs(t)
	var calibrate, windows []result.Window
	require.NoError(t, json.Unmarshal([]byte(out["calibrate"]), &calibrate))
	require.NoError(t, json.Unmarshal([]byte(out["windows"]), &windows))
	require.Len(t, calibrate, 1)
	require.NotEmpty(t, windows)
	assert.Equal(t, cfg.Export.QNN.CalibWindow, calibrate[0].Window)
	assert.Equal(t, windows[0], calibrate[0], "on the runner of the 2k window's export")

	s = newStep(t, map[string]string{"model-id": "Qwen/Qwen3-0.6B", "backend": "qnn", "contexts": "2048", "socs": "SM8650"})
	require.Equal(t, cli.ExitOK, SizeWindow(s.envWith(RunCLI)), "log: %s", s.log.String())
	assert.Equal(t, out["calibrate"], s.outputs(t)["calibrate"], "one window asked for: still calibrated once")
}

// TestSizeWindowVerdicts runs the real CLI offline: the action's exit code and annotation
// are plan's verdict and reason, the same for a model that is not eligible and for a
// backend that does not take it (3), and a window the backend lacks is a mistake (2).
func TestSizeWindowVerdicts(t *testing.T) {
	offlinePlan(t, "")
	for _, tc := range []struct {
		name, model, backend, contexts string
		code                           int
		says                           string
	}{
		{"a model the backend refuses", "google/gemma-3-1b-it", "vulkan", "", cli.ExitNotEligible,
			"::error title=size-window::plan: Vulkan (GPU) does not take google/gemma-3-1b-it: "},
		{"a model that is not eligible", "Qwen/Qwen3-8B", "vulkan", "", cli.ExitNotEligible,
			"::error title=size-window::plan: Qwen/Qwen3-8B is not eligible: "},
		{"a window the backend does not have", "Qwen/Qwen3-0.6B", "vulkan", "1000,2048", cli.ExitFailed,
			"::error title=size-window::plan: contexts: 1000 is not among Vulkan (GPU)'s windows ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, map[string]string{"model-id": tc.model, "backend": tc.backend, "contexts": tc.contexts})
			assert.Equal(t, tc.code, SizeWindow(s.envWith(RunCLI)))
			assert.True(t, strings.HasPrefix(s.log.String(), tc.says), "log: %s", s.log.String())
			assert.Empty(t, s.outputs(t), "a refused plan gives no matrix")

			var stdout, stderr strings.Builder
			code := cli.Main(context.Background(), []string{"plan", tc.model, "--backend", tc.backend, "--contexts", tc.contexts}, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, tc.code, code, "the CLI's exit code is the action's: %s", stderr.String())
		})
	}
}

// TestSizeWindowPlansTheFallback runs the real CLI offline with a gate result: the windows
// the gate refused are planned with the fp32 recipe, the one whose fp32 file fits the phone
// as a window to build (Qwen3-0.6B at 2k), the one that does not as skipped with why.
func TestSizeWindowPlansTheFallback(t *testing.T) {
	offlinePlan(t, filepath.Join(t.TempDir(), "cli-summary"))
	gate := result.New("gate")
	gate.Outputs.Failed = []result.Failed{
		{Window: 2048, File: "xnnpack/Qwen3-0.6B-8da4w-gptq-2k.pte", QMode: "8da4w-gptq", Reason: "decision gate failed: 3 of 12 rows agree"},
		{Window: 32768, File: "xnnpack/Qwen3-0.6B-8da4w-gptq-32k.pte", QMode: "8da4w-gptq", Reason: "decision gate failed: 3 of 12 rows agree"},
	}
	gate.Finish(cli.ExitFailed)
	path := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, result.Write(path, gate))

	s := newStep(t, map[string]string{"model-id": "Qwen/Qwen3-0.6B", "backend": "xnnpack", "fallback": path})
	code := SizeWindow(s.envWith(RunCLI))
	require.Equal(t, cli.ExitOK, code, "log: %s\nstderr: %s", s.log.String(), s.stderr.String())
	out := s.outputs(t)
	var windows []result.Window
	var skipped []result.Skipped
	require.NoError(t, json.Unmarshal([]byte(out["windows"]), &windows))
	require.NoError(t, json.Unmarshal([]byte(out["skipped"]), &skipped))
	require.Len(t, windows, 1)
	assert.Equal(t, 2048, windows[0].Window)
	assert.NotEmpty(t, windows[0].Runner)
	require.Len(t, skipped, 1)
	assert.Equal(t, 32768, skipped[0].Window)
	assert.Contains(t, skipped[0].Reason, "its 8da4w-gptq file failed the checks (decision gate failed: 3 of 12 rows agree) and the fp32 fallback would need ")

	s = newStep(t, map[string]string{"model-id": "Qwen/Qwen3-0.6B", "backend": "vulkan", "fallback": path})
	assert.Equal(t, cli.ExitFailed, SizeWindow(s.envWith(RunCLI)), "a backend without fp32 rows cannot fall back")
}

// TestSizeWindowLeavesOutForTheAppsList runs the real CLI offline with a pipeline that
// builds MediaTek for a second chip (MT6989): Qwen3-1.7B's files would then be more than
// the 40 the app lists, so the plan leaves QNN's windows out of the repo first (the app
// never runs them), then the longest MediaTek ones. Each backend's size-window, planning
// alone, reports those windows as skipped with the rule, and keeps them out of its matrix.
func TestSizeWindowLeavesOutForTheAppsList(t *testing.T) {
	offlinePlan(t, "")
	dir := t.TempDir()
	for _, name := range []string{config.PipelineFile, config.VersionsFile} {
		b, err := exeexpo.ConfigFS.ReadFile("config/" + name)
		require.NoError(t, err)
		if name == config.PipelineFile {
			require.Equal(t, 1, strings.Count(string(b), "socs: [MT6991]"), "the default builds one MediaTek chip")
			b = []byte(strings.Replace(string(b), "socs: [MT6991]", "socs: [MT6991, MT6989]", 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	cfg, err := config.Load(dir)
	require.NoError(t, err)
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "")
	require.NotNil(t, p.Layout)
	require.Greater(t, p.Layout.Planned, p.Layout.Limit, "two MediaTek chips put more files in the repo than the app lists")
	require.LessOrEqual(t, p.Layout.Files, p.Layout.Limit)
	require.NotEmpty(t, p.Layout.LeftOut)
	assert.Equal(t, "qnn", p.Layout.LeftOut[0].Backend, "the files the app never runs go first")

	for _, name := range []string{"qnn", "mediatek"} {
		s := newStep(t, map[string]string{"model-id": "Qwen/Qwen3-1.7B", "backend": name, "config": dir})
		require.Equal(t, cli.ExitOK, SizeWindow(s.envWith(RunCLI)), "log: %s\nstderr: %s", s.log.String(), s.stderr.String())
		out := s.outputs(t)
		var windows []result.Window
		var skipped []result.Skipped
		require.NoError(t, json.Unmarshal([]byte(out["windows"]), &windows))
		require.NoError(t, json.Unmarshal([]byte(out["skipped"]), &skipped))
		reasons := map[int]string{}
		for _, sk := range skipped {
			reasons[sk.Window] = sk.Reason
		}
		left := 0
		for _, o := range p.Layout.LeftOut {
			if o.Backend != name {
				continue
			}
			left++
			assert.Contains(t, reasons[o.Window], "left out of the repo: the app lists only the 40 smallest .pte files of a repo (docs/research/app-rules.md, rule 2)", "%s %d", name, o.Window)
			for _, w := range windows {
				assert.NotEqual(t, o.Window, w.Window, "%s: a window left out is not in the matrix", name)
			}
		}
		assert.Positive(t, left, "%s loses a window", name)
	}
}

// offlinePlan has the real CLI plan from the embedded snapshot, outside Actions, writing
// its step summary to summary ("": none).
func offlinePlan(t *testing.T, summary string) {
	t.Helper()
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
}
