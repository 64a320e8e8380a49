package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		w    win
		res  *Result
		want []string
	}{
		{"committed", win{backend: "xnnpack", window: 4096, seed: 1}, &Result{URL: "https://hub/commit/abc"},
			[]string{"### XNNPACK (CPU): " + testRepo + "\n", "Commit: https://hub/commit/abc\n", "| Window | 4,096 tokens (requested window) |",
				"| Source | [" + testModel + "](https://huggingface.co/" + testModel + ") at `a10cc1512eab` |", "| Check | passed (\"Paris\") |"}},
		{"no-op", win{backend: "mediatek", chip: "MT6991", window: 2048, seed: 2}, &Result{NoOp: true},
			[]string{"### MediaTek NeuroPilot MT6991 (Dimensity 9400): " + testRepo + "\n", "Already published: the repo holds this window unchanged, so no commit was made.",
				"| Check | structure checked (no host NPU runtime)<br>structure checked (no host NPU runtime) |", "-neuropilot-embedding-fp32.bin` (0.00 GB)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := Load(dir, writeWindow(t, dir, tc.w), "")
			require.NoError(t, err)
			md := Summary(w, tc.res)
			for _, s := range tc.want {
				assert.Contains(t, md, s)
			}
		})
	}
}
