package plan_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// chipPlan is a plan of one chip backend with two windows built and one skipped.
func chipPlan(eligible bool) *plan.Plan {
	v := &family.Verdict{Eligible: eligible}
	if !eligible {
		v.Reasons = []string{"named size 8B is above 4B", "not a chat model"}
	}
	return &plan.Plan{SchemaVersion: plan.SchemaVersion, Model: "org/M-1B", Verdict: v, Backends: []plan.BackendPlan{{
		Backend: "mediatek", Title: "MediaTek NeuroPilot", OK: true, Targets: []string{"MT6991", "MT6989"},
		Rows: []plan.Row{
			{Window: 2048, Label: "2k", HostNeedBytes: 40 << 30, Runner: "blacksmith-16vcpu-ubuntu-2404", SwapGiB: 64},
			{Window: 4096, Label: "4k", HostNeedBytes: 70 << 30, Runner: "blacksmith-32vcpu-ubuntu-2404", SwapGiB: 96},
			{Window: 8192, Label: "8k", HostNeedBytes: 300 << 30, Skip: "needs about 300.0 GiB of memory"},
		},
	}}}
}

// TestSelect picks the windows and chips asked for out of a backend's rows, and refuses by
// name what the backend does not have.
func TestSelect(t *testing.T) {
	cpu := chipPlan(true)
	cpu.Backends[0].Backend, cpu.Backends[0].Title, cpu.Backends[0].Targets = "xnnpack", "XNNPACK (CPU)", nil
	w2k := result.Window{Window: 2048, Runner: "blacksmith-16vcpu-ubuntu-2404", SwapGiB: 64}
	w4k := result.Window{Window: 4096, Runner: "blacksmith-32vcpu-ubuntu-2404", SwapGiB: 96}
	skip8k := result.Skipped{Window: 8192, Reason: "needs about 300.0 GiB of memory"}
	for _, tc := range []struct {
		name           string
		p              *plan.Plan
		backend        string
		contexts, socs string
		windows        []result.Window
		skipped        []result.Skipped
		chips          []string
		err            string
	}{
		{"every window and chip", chipPlan(true), "mediatek", "", "", []result.Window{w2k, w4k}, []result.Skipped{skip8k}, []string{"MT6991", "MT6989"}, ""},
		{"some windows, one chip", chipPlan(true), "mediatek", "4096, 8192", "MT6989", []result.Window{w4k}, []result.Skipped{skip8k}, []string{"MT6989"}, ""},
		{"only a skipped window", chipPlan(true), "mediatek", "8192", "", nil, []result.Skipped{skip8k}, []string{"MT6991", "MT6989"}, ""},
		{"no chips", cpu, "xnnpack", "2048", "", []result.Window{w2k}, nil, nil, ""},
		{"a leading zero is that window", chipPlan(true), "mediatek", "02048", "", []result.Window{w2k}, nil, []string{"MT6991", "MT6989"}, ""},
		{"a window the backend does not have", chipPlan(true), "mediatek", "2048,3000", "", nil, nil, nil,
			"contexts: 3000 is not among MediaTek NeuroPilot's windows (2048, 4096, 8192)"},
		{"a window that is no number", chipPlan(true), "mediatek", "2k", "", nil, nil, nil, `contexts: "2k" is not a window in tokens such as 4096`},
		{"a chip the backend does not build for", chipPlan(true), "mediatek", "", "MT6991,SM8750", nil, nil, nil,
			"socs: SM8750 is not one of MediaTek NeuroPilot's chips (MT6991, MT6989)"},
		{"chips for a backend without them", cpu, "xnnpack", "", "SM8750", nil, nil, nil,
			"socs: XNNPACK (CPU) builds no per-chip files, so it takes no chips (got SM8750)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.p.Select(tc.backend, tc.contexts, tc.socs)
			if tc.err != "" {
				require.Error(t, err)
				assert.Equal(t, tc.err, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Empty(t, cmp.Diff(tc.windows, s.Windows))
			assert.Empty(t, cmp.Diff(tc.skipped, s.Skipped))
			assert.Empty(t, cmp.Diff(tc.chips, s.SoCs))
		})
	}
}

// TestDecision is the one verdict every command, action and workflow gives: a model that is
// not eligible and a backend that does not take it both exit 3, with the reason.
func TestDecision(t *testing.T) {
	refused := chipPlan(true)
	refused.Backends[0] = plan.BackendPlan{Backend: "mediatek", Title: "MediaTek NeuroPilot", Reason: "the MediaTek scripts have no SmolLM3 model definition"}
	for _, tc := range []struct {
		name    string
		p       *plan.Plan
		backend string
		code    int
		reason  string
	}{
		{"eligible, no backend", chipPlan(true), "", result.ExitOK, ""},
		{"eligible, the backend takes it", chipPlan(true), "mediatek", result.ExitOK, ""},
		{"not eligible", chipPlan(false), "", result.ExitNotEligible, "org/M-1B is not eligible: named size 8B is above 4B; not a chat model"},
		{"not eligible, with a backend", chipPlan(false), "mediatek", result.ExitNotEligible, "org/M-1B is not eligible: named size 8B is above 4B; not a chat model"},
		{"the backend does not take it", refused, "mediatek", result.ExitNotEligible,
			"MediaTek NeuroPilot does not take org/M-1B: the MediaTek scripts have no SmolLM3 model definition"},
		{"the plan has no such section", chipPlan(true), "qnn", result.ExitFailed, "the plan of org/M-1B has no qnn section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, reason := tc.p.Decision(tc.backend)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.reason, reason)
		})
	}
}

// TestDecodeRefusesAnotherVersion: a plan of another schema, or of none, is refused by name.
func TestDecodeRefusesAnotherVersion(t *testing.T) {
	p := chipPlan(true)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	got, err := plan.Decode("plan.json", b)
	require.NoError(t, err)
	assert.Equal(t, "org/M-1B", got.Model)

	p.SchemaVersion = plan.SchemaVersion + 1
	b, err = json.Marshal(p)
	require.NoError(t, err)
	_, err = plan.Decode("plan.json", b)
	var ve *result.VersionError
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.Contains(t, err.Error(), "plan.json is an exe-expo plan of schema 2, and this exe-expo reads schema 1 only")

	_, err = plan.Decode("old.json", []byte(`{"model": "org/M-1B"}`))
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.Contains(t, err.Error(), "old.json has no schema_version")
}
