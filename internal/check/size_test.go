package check_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
)

// TestSize holds files to their backend's measured error, on the measured files of
// docs/research/sizing.md: each as built passes; an 8da4w file whose linears stayed fp32
// (ExecuTorch issue 22044; SmolLM2-360M's fp32 file is that file) fails with both numbers.
func TestSize(t *testing.T) {
	for _, tc := range []struct {
		name             string
		spec             check.Spec
		actual, estimate int64
		want             string // "" passes
	}{
		{"Qwen3-0.6B XNNPACK 2k as measured", spec("xnnpack"), 496_570_368, 499_968_163, ""},
		{"Qwen3-0.6B QNN SM8650 2k as measured", spec("qnn"), 665_070_592, 664_289_968, ""},
		{"Qwen3-0.6B Vulkan 2k as measured", spec("vulkan"), 616_000_000, 618_022_109, ""},
		{"Qwen3-0.6B MT6991 chunk as measured", spec("mediatek"), 86_052_736, 86_402_662, ""},
		{"SmolLM2-360M 8da4w shipped with fp32 linears", spec("vulkan"), 1_496_334_720, 325_714_444,
			"the files are 1496334720 bytes, +359.4% off the sizing estimate of 325714444 bytes; vulkan files are within 4% of it"},
		{"XNNPACK 3% under", spec("xnnpack"), 970, 1000, "-3.0% off the sizing estimate of 1000 bytes; xnnpack files are within 2%"},
		{"QNN 1.5% over", spec("qnn"), 1015, 1000, "+1.5% off"},
		{"no estimate", spec("xnnpack"), 1000, 0, "the report has no size estimate"},
		{"no files", spec("xnnpack"), 0, 1000, "the report lists no exported bytes"},
		{"no measured error", check.Spec{Backend: "enn"}, 1000, 1000, "enn has no measured size error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check.Size(tc.spec, tc.actual, tc.estimate)
			assert.Equal(t, "size", r.Kind)
			assert.Equal(t, tc.want == "", r.Passed, r.Problems)
			if tc.want == "" {
				assert.Empty(t, r.Problems)
				assert.Contains(t, r.Verdict(), "passed")
				return
			}
			require.Len(t, r.Problems, 1)
			assert.Contains(t, r.Problems[0], tc.want)
			assert.Contains(t, r.Verdict(), "failed: "+r.Problems[0])
		})
	}
}

// TestEveryExportingBackendHasASizeError: a backend that exports must say how far its
// files may be off their estimate, or every file it builds would fail the size check.
func TestEveryExportingBackendHasASizeError(t *testing.T) {
	for _, b := range backend.All() {
		if b.Unavailable != "" {
			continue
		}
		assert.Greater(t, b.Check.SizeError, 0.0, b.Name)
	}
}

// TestSizeErrorAtTheEdge holds each backend's measured size error at its edge, with the
// tolerance written out as the byte counts it allows on a 1,000,000-byte estimate: a file
// exactly that far over or under passes, one byte further fails. A tolerance loosened by a
// quarter lets the one-byte-further file through and fails here (docs/research/bounds.md).
func TestSizeErrorAtTheEdge(t *testing.T) {
	const estimate = 1_000_000
	tests := []struct {
		backend string
		// slack is the backend's tolerance in bytes of the estimate.
		slack int64
	}{
		{"xnnpack", 20_000},   // 2%
		{"vulkan", 40_000},    // 4%
		{"qnn", 10_000},       // 1%
		{"mediatek", 150_000}, // 15%
	}
	for _, tc := range tests {
		for _, c := range []struct {
			name   string
			actual int64
			passed bool
		}{
			{"at the tolerance over", estimate + tc.slack, true},
			{"one byte further over", estimate + tc.slack + 1, false},
			{"at the tolerance under", estimate - tc.slack, true},
			{"one byte further under", estimate - tc.slack - 1, false},
		} {
			t.Run(tc.backend+" "+c.name, func(t *testing.T) {
				r := check.Size(spec(tc.backend), c.actual, estimate)
				assert.Equal(t, c.passed, r.Passed, "%d bytes against %d: %v", c.actual, estimate, r.Problems)
			})
		}
	}
}
