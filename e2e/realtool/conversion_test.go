package realtool

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conversionTolerance bounds |ExecuTorch − transformers| over every logit, in fp32 on the
// same tokens. The two compute the same function in a different order (fused QKV in one,
// split in the other; RoPE as complex pairs or rotate_half), so they differ by float
// rounding only: about 1e-6 of the logits' size for these models. A wrong key map, a
// missing un-permute or a swapped LFM2 split is off by the logits' own size.
const conversionTolerance = 1e-3

// checkConversion: ExecuTorch's eager model, loaded from exe-expo's converted checkpoint
// exactly as the export's export_llm.yaml loads it, computes the transformers model's
// logits on the same tokens.
func checkConversion(t *testing.T, e exported) {
	t.Helper()
	tokens := []int{1, 17, 42, 99, 250, 7, 300, 12, 64, 128, 5, 383, 200, 33, 77, 3}
	b, err := json.Marshal(tokens)
	require.NoError(t, err)
	cmd := exec.Command(python(t), filepath.Join("testdata", "conversion_check.py"), filepath.Join(e.work, "export_llm.yaml"), e.model, string(b))
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "conversion check:\n%s", lastLines(stderr, 30))
	var r struct {
		Positions   int     `json:"positions"`
		Vocab       int     `json:"vocab"`
		MaxAbsDiff  float64 `json:"max_abs_diff"`
		MaxAbsLogit float64 `json:"max_abs_logit"`
		ArgmaxAgree float64 `json:"argmax_agree"`
	}
	require.NoError(t, json.Unmarshal([]byte(lastLines(string(out), 1)), &r), "%s", out)
	t.Logf("conversion: max |ExecuTorch − transformers| %.3g over logits up to %.3g, argmax agrees on %.0f%% of %d positions",
		r.MaxAbsDiff, r.MaxAbsLogit, 100*r.ArgmaxAgree, r.Positions)
	assert.Equal(t, len(tokens), r.Positions)
	assert.Equal(t, 384, r.Vocab)
	assert.Greater(t, r.MaxAbsLogit, 1.0, "the taught model's logits are not flat")
	assert.Less(t, r.MaxAbsDiff, conversionTolerance)
	assert.Equal(t, 1.0, r.ArgmaxAgree)
}
