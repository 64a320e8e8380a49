package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWindowOfAndSuperseded(t *testing.T) {
	tests := []struct {
		path, window string
		by4kXNNPACK  bool // superseded by a publish of xnnpack 4k
	}{
		{"xnnpack/Qwen3-1.7B-8da4w-4k.pte", "4k", true},
		{"xnnpack/Qwen3-1.7B-8da4w-gptq-4k.pte", "4k", true},
		{"xnnpack/Qwen3-1.7B-8da4w-2k.pte", "2k", false},
		{"xnnpack/export-report-4k.json", "4k", true},
		{"xnnpack/export-report.json", "", true},
		{"xnnpack/config.json", "", true},
		{"vulkan/Qwen3-1.7B-vulkan-8da4w-4k.pte", "4k", false},
		{"mtk/mt6991/Qwen3-1.7B-neuropilot-a16w8-4k-chunk2of4.pte", "4k", false},
		{"mtk/mt6991/Qwen3-1.7B-neuropilot-embedding-fp32.bin", "", false},
		{"qnn/sm8650/Qwen3-1.7B-qnn-hybrid-512.pte", "512", false},
		{"README.md", "", false},
		{"tokenizer.json", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			assert.Equal(t, tc.window, windowOf(tc.path))
			assert.Equal(t, tc.by4kXNNPACK, superseded(tc.path, "xnnpack", "4k"))
		})
	}
	assert.True(t, superseded("mtk/mt6991/Qwen3-1.7B-neuropilot-a16w8-4k-chunk2of4.pte", "mtk/mt6991", "4k"))
	assert.False(t, superseded("mtk/mt6991/Qwen3-1.7B-neuropilot-embedding-fp32.bin", "mtk/mt6991", "4k"), "the embedding is every window's")
}
