package action

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/cli"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
	"github.com/experimentalmachines/exe-expo/pkg/source"
)

// chipPlan is a plan of one chip backend with two windows built and one skipped.
func chipPlan(eligible bool) plan.Plan {
	v := &family.Verdict{Eligible: eligible}
	if !eligible {
		v.Reasons = []string{"named size 8B is above 4B", "not a chat model"}
	}
	return plan.Plan{Model: "org/M-1B", Verdict: v, Backends: []plan.BackendPlan{{
		Backend: "mediatek", Title: "MediaTek NeuroPilot", OK: true, Targets: []string{"MT6991", "MT6989"},
		Rows: []plan.Row{
			{Window: 2048, Label: "2k", HostNeedBytes: 40 << 30, Runner: "blacksmith-16vcpu-ubuntu-2404", SwapGiB: 64},
			{Window: 4096, Label: "4k", HostNeedBytes: 70 << 30, Runner: "blacksmith-32vcpu-ubuntu-2404", SwapGiB: 96},
			{Window: 8192, Label: "8k", HostNeedBytes: 300 << 30, Skip: "needs about 300.0 GiB of memory"},
		},
	}}}
}

func planJSON(t *testing.T, p plan.Plan) string {
	t.Helper()
	data, err := json.MarshalIndent(p, "", "  ")
	require.NoError(t, err)
	return string(data) + "\n"
}

// TestSizeWindow turns plans into the matrix outputs, and refuses what the plan cannot give.
func TestSizeWindow(t *testing.T) {
	cpuPlan := chipPlan(true)
	cpuPlan.Backends[0].Backend, cpuPlan.Backends[0].Title, cpuPlan.Backends[0].Targets = "xnnpack", "XNNPACK (CPU)", nil
	refused := chipPlan(true)
	refused.Backends[0] = plan.BackendPlan{Backend: "mediatek", Title: "MediaTek NeuroPilot", Reason: "the MediaTek scripts have no SmolLM3 model definition"}
	built := `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64},{"window":4096,"runner":"blacksmith-32vcpu-ubuntu-2404","swap_gib":96}]`
	skipped := `[{"window":8192,"reason":"needs about 300.0 GiB of memory"}]`
	for _, tc := range []struct {
		name    string
		backend string
		inputs  map[string]string
		fake    fakeCLI
		code    int
		outputs map[string]string
		err     string
	}{
		{"every window and chip", "mediatek", nil, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 0, map[string]string{
			"windows": built, "skipped": skipped, "socs": `["MT6991","MT6989"]`,
			"matrix": `{"entry":` + built + `,"soc":["MT6991","MT6989"]}`}, ""},
		{"some windows, one chip", "mediatek", map[string]string{"contexts": "4096, 8192", "socs": "MT6989"}, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 0, map[string]string{
			"windows": `[{"window":4096,"runner":"blacksmith-32vcpu-ubuntu-2404","swap_gib":96}]`, "skipped": skipped, "socs": `["MT6989"]`,
			"matrix": `{"entry":[{"window":4096,"runner":"blacksmith-32vcpu-ubuntu-2404","swap_gib":96}],"soc":["MT6989"]}`}, ""},
		{"only a skipped window: empty lists stay lists", "mediatek", map[string]string{"contexts": "8192"}, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 0, map[string]string{
			"windows": `[]`, "skipped": skipped, "socs": `["MT6991","MT6989"]`, "matrix": `{"entry":[],"soc":["MT6991","MT6989"]}`}, ""},
		{"no chips: no soc dimension", "xnnpack", map[string]string{"contexts": "2048"}, fakeCLI{stdout: planJSON(t, cpuPlan)}, 0, map[string]string{
			"windows": `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]`, "skipped": `[]`, "socs": `[]`,
			"matrix": `{"entry":[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]}`}, ""},
		{"a window the backend does not have", "mediatek", map[string]string{"contexts": "2048,3000"}, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 2, nil,
			"input contexts: 3000 is not among MediaTek NeuroPilot's windows (2048, 4096, 8192)"},
		{"a window written with a leading zero is that window", "mediatek", map[string]string{"contexts": "02048"}, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 0, map[string]string{
			"windows": `[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}]`, "skipped": `[]`, "socs": `["MT6991","MT6989"]`,
			"matrix": `{"entry":[{"window":2048,"runner":"blacksmith-16vcpu-ubuntu-2404","swap_gib":64}],"soc":["MT6991","MT6989"]}`}, ""},
		{"a window that is no number", "mediatek", map[string]string{"contexts": "2k"}, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 2, nil,
			`input contexts: "2k" is not a window in tokens such as 4096`},
		{"a chip the backend does not build for", "mediatek", map[string]string{"socs": "MT6991,SM8750"}, fakeCLI{stdout: planJSON(t, chipPlan(true))}, 2, nil,
			"input socs: SM8750 is not one of MediaTek NeuroPilot's chips (MT6991, MT6989)"},
		{"chips for a backend without them", "xnnpack", map[string]string{"socs": "SM8750"}, fakeCLI{stdout: planJSON(t, cpuPlan)}, 2, nil,
			"input socs: XNNPACK (CPU) builds no per-chip files, so it takes no chips (got SM8750)"},
		{"not eligible: exit 3 with the reasons", "mediatek", nil, fakeCLI{code: 3, stdout: planJSON(t, chipPlan(false))}, 3, nil,
			"org/M-1B is not eligible: named size 8B is above 4B; not a chat model"},
		{"the backend does not take the model", "mediatek", nil, fakeCLI{stdout: planJSON(t, refused)}, 2, nil,
			"MediaTek NeuroPilot does not take org/M-1B: the MediaTek scripts have no SmolLM3 model definition"},
		{"plan failed", "mediatek", nil, fakeCLI{code: 2, stderr: "plan: org/M-1B: the Hub says 404\n"}, 2, nil,
			"plan: org/M-1B: the Hub says 404"},
		{"plan printed no plan", "mediatek", nil, fakeCLI{stdout: "plan: none\n"}, 2, nil,
			"exe-expo plan --json printed no plan of org/M-1B on stdout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs := map[string]string{"model-id": "org/M-1B", "backend": tc.backend}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			s := newStep(t, inputs)
			code := SizeWindow(s.envWith(tc.fake.run))
			assert.Equal(t, tc.code, code)
			if tc.err != "" {
				assert.Equal(t, "::error title=size-window::"+tc.err+"\n", s.log.String())
				assert.Empty(t, s.outputs(t))
				return
			}
			assert.Empty(t, s.log.String(), "plan's JSON is read, not printed")
			assert.Equal(t, tc.outputs, s.outputs(t))
		})
	}
}

// TestSizeWindowPassesTheCLIsMasks: plan's JSON stays off the log, but the ::add-mask::
// lines the CLI writes for the job's tokens reach the runner, before the plan is read.
func TestSizeWindowPassesTheCLIsMasks(t *testing.T) {
	s := newStep(t, map[string]string{"model-id": "org/M-1B", "backend": "mediatek"})
	fake := &fakeCLI{answer: func(_ []string, stdout, _ io.Writer) int {
		_, _ = io.WriteString(stdout, "::add-mask::hf_job")
		_, _ = io.WriteString(stdout, "\n::add-mask::ghs_job\n"+planJSON(t, chipPlan(true))+"::warning::partial")
		return 0
	}}
	require.Equal(t, 0, SizeWindow(s.envWith(fake.run)))
	assert.Equal(t, "::add-mask::hf_job\n::add-mask::ghs_job\n", s.log.String())
	assert.Contains(t, s.outputs(t)["windows"], `"window":2048`)
}

// TestSizingTable: the step summary lists every requested window with its host need, runner
// and swap, or why none can build it.
func TestSizingTable(t *testing.T) {
	s := newStep(t, map[string]string{"model-id": "org/M-1B", "backend": "mediatek", "contexts": "2048,8192"})
	fake := &fakeCLI{stdout: planJSON(t, chipPlan(true))}
	require.Equal(t, 0, SizeWindow(s.envWith(fake.run)))
	assert.Equal(t, `### size-window: org/M-1B → mediatek

Chips: MT6991, MT6989.

| window | host need | runner | swap | skipped because |
|---|---:|---|---:|---|
| 2k (2048) | 40.0 GiB | `+"`blacksmith-16vcpu-ubuntu-2404`"+` | 64 GiB |  |
| 8k (8192) | 300.0 GiB | — | — | needs about 300.0 GiB of memory |

`, s.summary(t), "AddStepSummary ends the markdown with a line of its own")
}

// TestSizeWindowRunsPlan runs the real CLI offline on a snapshot model: MediaTek builds
// Qwen3-4B's short windows and skips the long ones for memory. The expected rows come from
// the plan package itself, so the test checks the plumbing (the CLI's JSON, the picking and
// the output encoding), not sizing figures that move with the sizing model.
func TestSizeWindowRunsPlan(t *testing.T) {
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	t.Setenv("GITHUB_ACTIONS", "")
	cliSummary := filepath.Join(t.TempDir(), "cli-summary")
	t.Setenv("GITHUB_STEP_SUMMARY", cliSummary) // the CLI writes its own plan summary there

	cfg, err := config.Load("")
	require.NoError(t, err)
	src, _, err := source.Open(context.Background(), "Qwen/Qwen3-4B", "main", nil)
	require.NoError(t, err)
	p := plan.Build(cfg, src, "mediatek")
	require.Len(t, p.Backends, 1)
	var want Sizing
	for _, row := range p.Backends[0].Rows {
		if row.Window != 2048 && row.Window != 16384 {
			continue
		}
		if row.Skip != "" {
			want.Skipped = append(want.Skipped, Skipped{row.Window, row.Skip})
		} else {
			want.Windows = append(want.Windows, Entry{row.Window, row.Runner, row.SwapGiB})
		}
	}
	require.Len(t, want.Windows, 1, "Qwen3-4B's MediaTek 2k window should have a runner")
	require.Len(t, want.Skipped, 1, "Qwen3-4B's MediaTek 16k window should be skipped for memory")
	require.Equal(t, cfg.Export.MediaTek.SoCs, p.Backends[0].Targets)

	s := newStep(t, map[string]string{"model-id": "Qwen/Qwen3-4B", "backend": "mediatek", "contexts": "2048,16384"})
	code := SizeWindow(s.envWith(RunCLI))
	require.Equal(t, cli.ExitOK, code, "log: %s\nstderr: %s", s.log.String(), s.stderr.String())

	out := s.outputs(t)
	var windows []Entry
	var skipped []Skipped
	var socs []string
	require.NoError(t, json.Unmarshal([]byte(out["windows"]), &windows))
	require.NoError(t, json.Unmarshal([]byte(out["skipped"]), &skipped))
	require.NoError(t, json.Unmarshal([]byte(out["socs"]), &socs))
	assert.Equal(t, want.Windows, windows)
	assert.Equal(t, want.Skipped, skipped)
	assert.Equal(t, cfg.Export.MediaTek.SoCs, socs)
	assert.Contains(t, s.summary(t), "| 16k (16384) |")

	data, err := os.ReadFile(cliSummary)
	require.NoError(t, err)
	assert.Contains(t, string(data), "### plan Qwen/Qwen3-4B: eligible")
}
