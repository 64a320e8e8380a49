package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// TestVerdictsRoundTrip: the report keeps each verdict under its own key, and reads them
// back as written.
func TestVerdictsRoundTrip(t *testing.T) {
	r := &Report{
		SizeCheck: &check.SizeResult{Kind: "size", Passed: true, ActualBytes: 10, EstimateBytes: 10, MaxError: 0.02},
		Smoke:     &smoke.Result{Kind: "smoke", Passed: true, Reply: "Paris", Tokens: 1},
		Gate:      &gate.Result{Kind: "gate", Passed: true, Graded: 12, Prompt: gate.PromptID{File: "neutral", SHA256: "ab"}},
	}
	path := filepath.Join(t.TempDir(), Name("2k"))
	require.NoError(t, Write(path, r))
	var raw map[string]json.RawMessage
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &raw))
	for _, k := range []string{"size_check", "smoke", "gate"} {
		assert.Contains(t, raw, k)
	}
	back, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, r.SizeCheck, back.SizeCheck)
	assert.Equal(t, r.Smoke.Reply, back.Smoke.Reply)
	assert.Equal(t, "ab", back.Gate.Prompt.SHA256)
}

func TestCheckedAndBlockers(t *testing.T) {
	passed := check.Result{Passed: true}
	failed := check.Result{Passed: false, Problems: []string{"forward does not run on XnnpackBackend"}}
	for _, tc := range []struct {
		name     string
		r        Report
		checked  string
		blockers []string
	}{
		{"nothing checked", Report{}, "", nil},
		{"structural only", Report{StructuralCheck: []check.Result{passed, passed}}, "structural", nil},
		{"one structural failed", Report{StructuralCheck: []check.Result{passed, failed}}, "",
			[]string{"structural check failed: forward does not run on XnnpackBackend"}},
		{"smoke passed", Report{StructuralCheck: []check.Result{passed}, Smoke: &smoke.Result{Passed: true}}, "smoke", nil},
		{"every check failed", Report{StructuralCheck: []check.Result{passed},
			SizeCheck: &check.SizeResult{Problems: []string{"the files are 2 bytes"}},
			Smoke:     &smoke.Result{Problems: []string{"the file generated no token"}},
			Gate:      &gate.Result{Problems: []string{"0.190 against 0.583", "2 of 4 quiet rows"}}}, "structural",
			[]string{"size check failed: the files are 2 bytes", "smoke test failed: the file generated no token",
				"decision gate failed: 0.190 against 0.583; 2 of 4 quiet rows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.checked, tc.r.Checked())
			assert.Equal(t, tc.blockers, tc.r.Blockers())
		})
	}
}

func TestTotalBytes(t *testing.T) {
	r := Report{Files: []File{{Bytes: 86_052_736}, {Bytes: 165_214_720}, {Bytes: 622_329_856}}}
	assert.Equal(t, int64(873_597_312), r.TotalBytes())
}
