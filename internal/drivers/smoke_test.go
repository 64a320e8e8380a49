package drivers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/smoke"
)

// TestSmokeRunContract runs smoke_run.py against a stand-in ExecuTorch wheel and
// transformers (testdata/smoke_standin): the stand-in runner refuses to run unless the
// custom ops and quantized kernels were imported first and the config is greedy, 32 tokens,
// no echo, no BOS or EOS; the driver's output goes through internal/smoke's verdict.
func TestSmokeRunContract(t *testing.T) {
	py, err := exec.LookPath("python3")
	needTool(t, err)
	standin, err := filepath.Abs(filepath.Join("testdata", "smoke_standin"))
	require.NoError(t, err)
	dir := t.TempDir()
	pte, tok, src := filepath.Join(dir, "m.pte"), filepath.Join(dir, "tokenizer.json"), filepath.Join(dir, "source")
	require.NoError(t, os.WriteFile(pte, []byte("pte"), 0o644))
	require.NoError(t, os.WriteFile(tok, []byte("{}"), 0o644))
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "template.txt"), []byte("<|user|>{content}<|assistant|>"), 0o644))

	for _, tc := range []struct {
		name, mode, source string
		prompt, tplErr     string
		tokens             int
		runnerErr          string
		passed             bool
	}{
		{"chat template, answers", "answer", src, "<|user|>What is the capital of France?<|assistant|>", "", 5, "", true},
		{"no template: completion prompt recorded", "answer", "", "Question: What is the capital of France?\nAnswer:",
			"ValueError: no source folder to read a chat template from", 5, "", true},
		{"folder without template", "answer", dir, "Question: What is the capital of France?\nAnswer:",
			"FileNotFoundError: [Errno 2] No such file or directory: '" + filepath.Join(dir, "template.txt") + "'", 5, "", true},
		{"degenerate", "repeat", src, "<|user|>What is the capital of France?<|assistant|>", "", 32, "", false},
		{"runner raises", "raise", src, "<|user|>What is the capital of France?<|assistant|>", "", 0, "RuntimeError: method forward failed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Runner{Python: py, Dir: filepath.Join(dir, "drivers"), Env: []string{"PYTHONPATH=" + standin, "SMOKE_STANDIN=" + tc.mode}}
			out, _, err := r.Smoke(context.Background(), NewSmokeRun(pte, tok, tc.source))
			require.NoError(t, err)
			assert.Equal(t, tc.prompt, out.Prompt)
			assert.Equal(t, tc.tplErr, out.TemplateError)
			assert.Len(t, out.Tokens, tc.tokens)
			assert.Equal(t, tc.runnerErr, out.RunnerError)
			if tc.tokens > 0 {
				require.NotNil(t, out.Stats)
				require.NotNil(t, out.Stats.DecodeTokPerSec)
				assert.InDelta(t, 20.0, *out.Stats.DecodeTokPerSec, 1e-9)
				assert.InDelta(t, 250.0, *out.Stats.PrefillTokPerSec, 1e-9)
				assert.Equal(t, tc.tokens, out.Stats.GeneratedTokens)
			} else {
				assert.Nil(t, out.Stats)
			}
			v := smoke.Judge(out, 751_632_384)
			assert.Equal(t, tc.passed, v.Passed, v.Problems)
			if tc.mode == "answer" {
				assert.Equal(t, " The capital is Paris.", v.Reply)
				assert.True(t, v.Answered)
			}
		})
	}

	t.Run("missing file is a driver error", func(t *testing.T) {
		r := Runner{Python: py, Dir: filepath.Join(dir, "drivers"), Env: []string{"PYTHONPATH=" + standin}}
		_, _, err := r.Smoke(context.Background(), NewSmokeRun(filepath.Join(dir, "none.pte"), tok, src))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "pte "+filepath.Join(dir, "none.pte")+" does not exist")
	})
}
