package drivers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/speed"
)

// TestSpeedRunContract runs speed_run.py against the stand-in ExecuTorch wheel and
// tokenizer (testdata/smoke_standin): each prompt is cut to its token count from the text
// (repeated when short), the runner is loaded before the memory is read, and the stats go
// through internal/speed's figures and rule: the stand-in's clock prefills at 250 tokens/s
// and decodes at 20, or prefills at 20 in its "onetoken" mode, which the rule flags.
func TestSpeedRunContract(t *testing.T) {
	py, err := exec.LookPath("python3")
	needTool(t, err)
	standin, err := filepath.Abs(filepath.Join("testdata", "smoke_standin"))
	require.NoError(t, err)
	dir := t.TempDir()
	pte, tok := filepath.Join(dir, "m.pte"), filepath.Join(dir, "tokenizer.json")
	require.NoError(t, os.WriteFile(pte, []byte("pte"), 0o644))
	require.NoError(t, os.WriteFile(tok, []byte("{}"), 0o644))
	text := strings.Repeat("a quiet pond in the woods ", 30) // 180 words, fewer than the long prompt
	prompts := []speed.Prompt{{Name: "100-token", Tokens: 100}, {Name: "300-token", Tokens: 300}}

	for _, tc := range []struct {
		mode    string
		prefill float64
		slow    int
	}{{"answer", 250, 0}, {"onetoken", 20, 2}} {
		t.Run(tc.mode, func(t *testing.T) {
			r := Runner{Python: py, Dir: filepath.Join(dir, "drivers"), Env: []string{"PYTHONPATH=" + standin, "SMOKE_STANDIN=" + tc.mode}}
			out, _, err := r.Speed(context.Background(), NewSpeedRun(pte, tok, text, prompts))
			require.NoError(t, err)
			require.Empty(t, out.RunnerError)
			assert.Positive(t, out.RSSAfterLoadBytes, "the memory after load is read")
			res := speed.FromOutput(out, speed.Host{}, speed.Structure{}, nil)
			require.Len(t, res.Runs, 2)
			for i, run := range res.Runs {
				assert.Equal(t, prompts[i].Name, run.Name)
				assert.Equal(t, prompts[i].Tokens, run.PromptTokens, "the prompt is cut to its tokens")
				assert.InDelta(t, tc.prefill, run.PrefillTokPerSec, 1e-6)
				assert.InDelta(t, 20, run.DecodeTokPerSec, 1e-6)
				assert.Equal(t, 5, run.GeneratedTokens)
			}
			assert.Len(t, res.SlowPath, tc.slow, res.SlowPath)
		})
	}

	t.Run("the runner's failure is recorded per prompt", func(t *testing.T) {
		r := Runner{Python: py, Dir: filepath.Join(dir, "drivers"), Env: []string{"PYTHONPATH=" + standin, "SMOKE_STANDIN=raise"}}
		out, _, err := r.Speed(context.Background(), NewSpeedRun(pte, tok, text, prompts))
		require.NoError(t, err)
		require.Len(t, out.Runs, 2)
		assert.Equal(t, "RuntimeError: method forward failed", out.Runs[0].RunnerError)
	})

	t.Run("missing tokenizer is a driver error", func(t *testing.T) {
		r := Runner{Python: py, Dir: filepath.Join(dir, "drivers"), Env: []string{"PYTHONPATH=" + standin}}
		_, _, err := r.Speed(context.Background(), NewSpeedRun(pte, filepath.Join(dir, "none.json"), text, prompts))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "tokenizer "+filepath.Join(dir, "none.json")+" does not exist")
	})
}
