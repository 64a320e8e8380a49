package realtool

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// smallChunk is the prefill chunk of TestChunkedPrefill's exports: a prompt of a few hundred
// tokens then spans several chunks, as a prompt of several thousand does at the shipped 2,048.
const smallChunk = 64

// prefillPrompt is plain English the tiny tokenizers split into some 4 to 6 chunks of
// smallChunk tokens.
var prefillPrompt = strings.Repeat("The river runs past the old mill, and the town wakes to its sound every morning. ", 12)

// TestChunkedPrefill is issue 48 points 1 and 5 on the real toolchain. Each family's file,
// exported with a prefill chunk of 64 (Qwen3.5's gated DeltaNet dynamic like the others):
// the metadata's get_max_seq_len is the token bound forward was exported with (the file
// tells the truth); ExecuTorch's TextLLMRunner prefills a prompt of several chunks; and the
// program prefilled in chunks of get_max_seq_len gives the distribution and the greedy
// continuation it gives prefilled one token a call, within the gate's deep KL bound.
func TestChunkedPrefill(t *testing.T) {
	t.Parallel()
	cfg, err := config.Default()
	require.NoError(t, err)
	for _, family := range []string{"qwen3", "qwen3.5"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			e := export(t, "xnnpack", family, replyA, 1, "--config", chunkConfig(t, smallChunk))
			assert.Contains(t, e.report.Recipe["description"], ", prefill chunk 64,")
			checkFile(t, e, "XnnpackBackend")
			r := prefillCheck(t, e, 8)
			assert.True(t, r.Dynamic, "enable_dynamic_shape")
			assert.Equal(t, smallChunk, r.MaxSeqLen, "get_max_seq_len")
			assert.Equal(t, r.MaxSeqLen, r.TokenBound, "forward takes the get_max_seq_len tokens the metadata says")
			assert.Greater(t, r.PromptTokens, 3*smallChunk, "the prompt spans several chunks")

			assert.Empty(t, r.Runner.Error, "TextLLMRunner on a prompt of %d tokens", r.PromptTokens)
			assert.Equal(t, r.PromptTokens, r.Runner.PromptTokens, "the runner read the prompt as the tokenizer splits it")
			assert.Positive(t, r.Runner.Generated, "the runner generated after its chunked prefill")

			require.Empty(t, r.Chunked.Error, "the program prefilled in chunks of get_max_seq_len")
			require.Empty(t, r.Single.Error, "the program prefilled one token a call")
			t.Logf("%d-token prompt: KL(one token a call || chunks of %d) %.3g nats, max |logit diff| %.3g; greedy %v and %v",
				r.PromptTokens, r.MaxSeqLen, r.KL, r.MaxAbs, r.Single.Greedy, r.Chunked.Greedy)
			assert.Less(t, r.KL, cfg.Gate.MaxDeepMeanKL, "chunked prefill against token by token, within the gate's deep bound")
			assert.Equal(t, r.Single.Greedy, r.Chunked.Greedy, "the greedy continuations agree")
		})
	}
}

// prefillResult is testdata/prefill_check.py's report.
type prefillResult struct {
	MaxSeqLen     int     `json:"max_seq_len"`
	MaxContextLen int     `json:"max_context_len"`
	Dynamic       bool    `json:"dynamic"`
	TokenBound    int     `json:"token_bound"`
	PromptTokens  int     `json:"prompt_tokens"`
	KL            float64 `json:"kl"`
	MaxAbs        float64 `json:"max_abs"`
	Chunked       struct {
		Greedy []int  `json:"greedy"`
		Error  string `json:"error"`
	} `json:"chunked"`
	Single struct {
		Greedy []int  `json:"greedy"`
		Error  string `json:"error"`
	} `json:"single"`
	Runner struct {
		Error        string `json:"error"`
		PromptTokens int    `json:"prompt_tokens"`
		Generated    int    `json:"generated"`
		Reply        string `json:"reply"`
	} `json:"runner"`
}

// prefillCheck runs testdata/prefill_check.py on the export's one file with prefillPrompt.
func prefillCheck(t *testing.T, e exported, steps int) prefillResult {
	t.Helper()
	require.Len(t, e.report.Files, 1)
	plan, err := json.Marshal(map[string]any{
		"pte": filepath.Join(e.out, filepath.FromSlash(e.report.Files[0].Path)), "tokenizer": filepath.Join(e.model, "tokenizer.json"),
		"prompt": prefillPrompt, "steps": steps,
	})
	require.NoError(t, err)
	out, err := exec.Command(python(t), filepath.Join("testdata", "prefill_check.py"), string(plan)).Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "prefill check:\n%s", lastLines(stderr, 30))
	var r prefillResult
	require.NoError(t, json.Unmarshal([]byte(lastLines(string(out), 1)), &r), "%s", lastLines(string(out), 5))
	return r
}

// chunkConfig is a copy of the repository's config whose exports prefill chunk tokens a
// call.
func chunkConfig(t *testing.T, chunk int) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "config"))))
	p := filepath.Join(dir, "pipeline.yaml")
	y, err := os.ReadFile(p)
	require.NoError(t, err)
	const line = "  prefill_chunk: 2048"
	require.Contains(t, string(y), line, "pipeline.yaml's prefill chunk")
	y = []byte(strings.Replace(string(y), line, "  prefill_chunk: "+strconv.Itoa(chunk), 1))
	require.NoError(t, os.WriteFile(p, y, 0o644))
	return dir
}

// replyMultibyte starts with a character the tiny byte-level tokenizer splits into two
// tokens, neither of them whole UTF-8 ("É" is C3 89, "é" C3 A9, "à" C3 A0).
const replyMultibyte = "Été à Paris."

// TestSmokeMultibyteReply is issue 48 point 6: a model whose reply starts inside a
// multi-byte character passes the smoke run. The binding cannot hand its first piece to
// Python as text (UnicodeDecodeError, which failed the file as "generated no token"); the
// app's JNI layer buffers those bytes, and the driver now decodes the token ids itself.
func TestSmokeMultibyteReply(t *testing.T) {
	t.Parallel()
	e := export(t, "xnnpack", "qwen3", replyMultibyte, 3)
	code, out, errOut := exeExpo(t, "smoke", e.out, "--backend", e.report.Backend, "--source", e.model, "--python", python(t))
	r := readReport(t, e)
	require.NotNil(t, r.Smoke, "smoke wrote no verdict (exit %d)\n%s\n%s", code, out, lastLines(errOut, 20))
	t.Logf("smoke: %q from the %s, %d tokens, problems %v", r.Smoke.Reply, r.Smoke.ReplyFrom, r.Smoke.Tokens, r.Smoke.Problems)
	assert.Equal(t, "program", r.Smoke.ReplyFrom, "the binding could not pass the first piece as text: the reply starts inside a character")
	// The tiny model's greedy reply is its lesson's tail ("é à Paris." measured: the first
	// token C3 is held until A9 makes "é"), in whole characters.
	assert.Contains(t, r.Smoke.Reply, "à Paris.", "the taught reply")
	assert.NotContains(t, r.Smoke.Reply, "\ufffd", "no character left broken")
	assert.True(t, r.Smoke.Passed, "smoke verdict: %v", r.Smoke.Problems)
	require.NotNil(t, r.Smoke.Stats, "the runner's stats, from its run without a token callback")
	assert.Positive(t, r.Smoke.Stats.GeneratedTokens)
	assert.Equal(t, 0, code)
}
