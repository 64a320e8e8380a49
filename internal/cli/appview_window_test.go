package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// TestAppviewWindowDiffers: a published repo whose config.json methods give the app
// another window than the one exe-expo exported (its context) is refused with exit 3,
// naming the window rule, the file and both windows.
func TestAppviewWindowDiffers(t *testing.T) {
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_OUTPUT", "")
	srv.MustAddModel(t, "someone/Qwen3-1.7B-ExecuTorch", map[string][]byte{
		"tokenizer.json":                  []byte("{}"),
		"xnnpack/Qwen3-1.7B-8da4w-2k.pte": []byte("program"),
		"xnnpack/config.json": []byte(`{"backend":"xnnpack","variants":[{"file":"Qwen3-1.7B-8da4w-2k.pte","context":2048,` +
			`"methods":{"get_max_context_len":4096,"get_max_seq_len":4096}}]}`),
	})
	code, _, errs := run(t, "appview", "someone/Qwen3-1.7B-ExecuTorch")
	require.Equal(t, ExitNotEligible, code, errs)
	assert.Contains(t, errs, "[window] xnnpack/Qwen3-1.7B-8da4w-2k.pte: the app shows a 4096-token window and the file was exported at 2048")
}
