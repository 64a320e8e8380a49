package handoff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// check is a smoke or gate result as the command writes it.
func check(command string, code int, reason string, o result.Outputs) *result.Result {
	r := result.New(command)
	r.Reason, r.Outputs = reason, o
	r.Finish(code)
	return r
}

var (
	planned  = []result.Skipped{{Window: 32768, Reason: "no runner has the memory"}}
	exported = []result.Skipped{{Window: 16384, Reason: "the runner ran out of disk"}}
	passed   = result.Outputs{Skipped: exported, Files: []string{"xnnpack/a-2k.pte", "xnnpack/a-4k.pte"},
		Reports: []string{"xnnpack/export-report-2k.json", "xnnpack/export-report-4k.json"}}
	refused = result.Outputs{Skipped: exported, Files: []string{"xnnpack/a-2k.pte"}, Reports: []string{"xnnpack/export-report-2k.json"},
		Failed: []result.Failed{{Window: 4096, File: "xnnpack/a-4k.pte", QMode: "8da4w-gptq", Reason: "3 of 12 rows agree"}}}
	refusedFP32 = result.Outputs{Skipped: exported, Failed: []result.Failed{{Window: 4096, File: "xnnpack/a-fp32-4k.pte", QMode: "fp32", Reason: "3 of 12 rows agree"}}}
)

func TestDecide(t *testing.T) {
	both := append(append([]result.Skipped{}, planned...), exported...)
	for _, tc := range []struct {
		name string
		in   Input
		want Handoff
		// fallback says the gate's result is handed to the fp32 fallback
		fallback bool
	}{
		{"nothing exported, no check ran", Input{Before: planned},
			Handoff{Skipped: planned}, false},
		{"smoke passes", Input{Checks: []*result.Result{check("smoke", 0, "", passed)}, Exported: true, Before: planned},
			Handoff{Checked: passed.Files, Files: passed.Files, Reports: passed.Reports, Skipped: both}, false},
		{"smoke refuses", Input{Checks: []*result.Result{check("smoke", 2, "a-4k.pte is 40% over its estimate", passed)}, Status: 2, Exported: true, Before: planned},
			Handoff{Code: 2, Reason: "exe-expo smoke refused the files: a-4k.pte is 40% over its estimate", Skipped: both}, false},
		{"smoke and the gate pass", Input{Checks: []*result.Result{check("smoke", 0, "", passed), check("gate", 0, "", passed)}, Exported: true, Fallback: true},
			Handoff{Checked: passed.Files, Files: passed.Files, Reports: passed.Reports, Skipped: exported}, false},
		{"the gate refuses a window: the fallback rebuilds it", Input{Checks: []*result.Result{check("smoke", 0, "", passed), check("gate", 2, "refused", refused)}, Status: 2, Exported: true, Fallback: true},
			Handoff{Checked: refused.Files, Files: refused.Files, Reports: refused.Reports, Skipped: exported, Failed: refused.Failed}, true},
		{"the gate refuses a window, no fallback", Input{Checks: []*result.Result{check("smoke", 0, "", passed), check("gate", 2, "refused", refused)}, Status: 2, Exported: true},
			Handoff{Code: 2, Reason: "exe-expo gate refused the files: refused", Skipped: exported}, false},
		{"the gate refuses an fp32 file: nothing to fall back to", Input{Checks: []*result.Result{check("smoke", 0, "", passed), check("gate", 2, "refused", refusedFP32)}, Status: 2, Exported: true, Fallback: true},
			Handoff{Code: 2, Reason: "exe-expo gate refused the files: refused", Skipped: exported}, false},
		{"the gate cannot run: it refused no file", Input{Checks: []*result.Result{check("smoke", 0, "", passed), check("gate", 2, "no reference", result.Outputs{Skipped: exported})}, Status: 2, Exported: true, Fallback: true},
			Handoff{Code: 2, Reason: "exe-expo gate refused the files: no reference", Skipped: exported}, false},
		{"a smoke refusal never falls back", Input{Checks: []*result.Result{check("smoke", 2, "refused", refused)}, Status: 2, Exported: true, Fallback: true},
			Handoff{Code: 2, Reason: "exe-expo smoke refused the files: refused", Skipped: exported}, false},
		{"the fp32 fallback's check adds to verify's", Input{Checks: []*result.Result{check("smoke", 0, "", refused), check("gate", 0, "", refused)}, Exported: true,
			Files: []string{"xnnpack/a-8k.pte"}, Before: append(append([]result.Skipped{}, planned...), result.Skipped{Window: 2048, Reason: "fp32 does not fit"})},
			Handoff{Checked: refused.Files, Files: []string{"xnnpack/a-8k.pte", "xnnpack/a-2k.pte"}, Reports: refused.Reports,
				Skipped: []result.Skipped{planned[0], {Window: 2048, Reason: "fp32 does not fit"}, exported[0]}}, false},
		{"nothing to check after the fallback: verify's files go on", Input{Files: []string{"xnnpack/a-8k.pte"}, Before: planned},
			Handoff{Files: []string{"xnnpack/a-8k.pte"}, Skipped: planned}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.fallback, got.FallbackFrom != nil, "the gate's result handed to the fallback")
			if tc.fallback {
				assert.Same(t, tc.in.Checks[len(tc.in.Checks)-1], got.FallbackFrom)
			}
			got.FallbackFrom = nil
			assert.Empty(t, cmp.Diff(normalized(tc.want), got))
		})
	}
}

// normalized is h with every list that is nil empty: Decide never hands on a null list.
func normalized(h Handoff) Handoff {
	for _, l := range []*[]string{&h.Checked, &h.Files, &h.Reports} {
		if *l == nil {
			*l = []string{}
		}
	}
	if h.Skipped == nil {
		h.Skipped = []result.Skipped{}
	}
	if h.Failed == nil {
		h.Failed = []result.Failed{}
	}
	return h
}

// TestDecideRefusesWhatDoesNotAgree: a check that died before it wrote its result must not
// pass for the check before it, and files no check looked at are not handed on.
func TestDecideRefusesWhatDoesNotAgree(t *testing.T) {
	smoke := check("smoke", 0, "", passed)
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"files, no result", Input{Exported: true}, "no check's result"},
		{"a failure, no result", Input{Status: 2}, "exited with code 2 and wrote no result"},
		{"the gate died after smoke passed", Input{Checks: []*result.Result{smoke}, Status: 137, Exported: true}, "exited with code 137, and its result (exe-expo smoke) says 0"},
		{"a result that says it failed, a status that says not", Input{Checks: []*result.Result{check("smoke", 2, "x", passed)}, Exported: true}, "exited with code 0, and its result (exe-expo smoke) says 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Decide(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, h.Files, "nothing is handed on")
		})
	}
}

func TestWindows(t *testing.T) {
	assert.Equal(t, []int{}, Handoff{}.Windows())
	assert.Equal(t, []int{4096, 8192}, Handoff{Failed: []result.Failed{{Window: 4096}, {Window: 8192, SoC: "SM8750"}}}.Windows())
}
