package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/golden"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func inspect(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), append([]string{"inspect"}, args...), nil, &out, &errOut)
	return out.String(), errOut.String(), code
}

// inspectFiles writes the built programs the golden tests inspect, next to the real
// fixtures in testdata/inspect.
func inspectFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"add.pte", "arduino_keyword_spotting.pte", "ModuleLinear-no-constant-segment.pte"} {
		files[name] = filepath.Join("testdata", "inspect", name)
	}
	// Files ExecuTorch 1.4.0 made for the coverage check (pkg/pte/testdata/coverage).
	for _, name := range []string{"linear-xnnpack.pte", "linear-xnnpack-cpu.pte", "linear-vulkan.pte"} {
		files[name] = filepath.Join("..", "..", "pkg", "pte", "testdata", "coverage", name)
	}
	shapes := map[string]interface {
		Spec() (ptetest.Spec, error)
	}{
		"llm-xnnpack.pte": ptetest.LLM{Backend: "xnnpack", WeightsSize: 1 << 20,
			Metadata: ptetest.ExportLLMMetadata(2048, 4096, 128000, []int64{128009, 128001})},
		"llm-vulkan.pte": ptetest.LLM{Backend: "vulkan", Metadata: ptetest.ExportLLMMetadata(512, 512, 1, []int64{2})},
		"qnn-hybrid.pte": ptetest.QNN{},
		"mtk-chunk.pte": ptetest.MediaTekChunk{Exp: "Qwen3-0.6B_A16W4_4_chunks", PromptTokens: 128,
			Window: 2048, Chunk: 0, WeightsSize: 4096},
	}
	for name, s := range shapes {
		spec, err := s.Spec()
		require.NoError(t, err, name)
		path := filepath.Join(dir, name)
		require.NoError(t, ptetest.WriteFile(path, spec))
		files[name] = path
	}
	return files
}

func TestInspectGolden(t *testing.T) {
	files := inspectFiles(t)
	tests := []struct {
		golden, file string
		args         []string
		code         int
	}{
		{"add.txt", "add.pte", nil, ExitOK},
		{"add.json", "add.pte", []string{"--json"}, ExitOK},
		{"keyword_spotting.txt", "arduino_keyword_spotting.pte", nil, ExitOK},
		{"module_linear.txt", "ModuleLinear-no-constant-segment.pte", nil, ExitOK},
		{"add-as-xnnpack.txt", "add.pte", []string{"--backend", "xnnpack"}, ExitFailed},
		{"llm-xnnpack.txt", "llm-xnnpack.pte", []string{"--backend", "xnnpack", "--max-seq-len", "2048",
			"--max-context-len", "4096", "--bos", "128000", "--eos", "128009,128001"}, ExitOK},
		{"llm-xnnpack.json", "llm-xnnpack.pte", []string{"--json", "--backend", "xnnpack"}, ExitOK},
		{"llm-vulkan-wrong-window.txt", "llm-vulkan.pte", []string{"--backend", "vulkan", "--max-context-len", "1024"}, ExitFailed},
		{"qnn-hybrid.txt", "qnn-hybrid.pte", []string{"--backend", "qnn"}, ExitOK},
		{"mtk-chunk.txt", "mtk-chunk.pte", []string{"--backend", "mediatek", "--mtk-exp", "Qwen3-0.6B_A16W4_4_chunks",
			"--mtk-window", "2048", "--mtk-chunk", "0"}, ExitOK},
		{"linear-xnnpack.txt", "linear-xnnpack.pte", nil, ExitOK},
		{"linear-xnnpack.json", "linear-xnnpack.pte", []string{"--json"}, ExitOK},
		{"linear-vulkan.txt", "linear-vulkan.pte", nil, ExitOK},
		{"linear-xnnpack-cpu.txt", "linear-xnnpack-cpu.pte", []string{"--backend", "xnnpack"}, ExitFailed},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := inspect(t, append([]string{files[tc.file]}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stderr %q", errOut)
			golden.Check(t, filepath.Join("testdata", "inspect", tc.golden), []byte(out))
		})
	}
}

// TestInspectJSONValues decodes the JSON output and checks the values a caller reads.
func TestInspectJSONValues(t *testing.T) {
	files := inspectFiles(t)
	out, errOut, code := inspect(t, files["llm-xnnpack.pte"], "--json", "--backend", "xnnpack", "--max-context-len", "4096")
	require.Equal(t, ExitOK, code, "stderr %q", errOut)
	var v struct {
		Metadata map[string]any `json:"metadata"`
		Methods  []struct {
			Name      string `json:"name"`
			Constant  bool   `json:"constant"`
			Delegates []struct {
				ID, Signature string
			} `json:"delegates"`
		} `json:"methods"`
		Check struct {
			Passed bool `json:"passed"`
		} `json:"check"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, 4096.0, v.Metadata["get_max_context_len"])
	assert.Equal(t, []any{128009.0, 128001.0}, v.Metadata["get_eos_ids"])
	require.NotEmpty(t, v.Methods)
	assert.Equal(t, "forward", v.Methods[0].Name)
	assert.False(t, v.Methods[0].Constant)
	require.NotEmpty(t, v.Methods[0].Delegates)
	assert.Equal(t, "XH00", v.Methods[0].Delegates[0].Signature)
	assert.True(t, v.Check.Passed, "check passed")
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pte")
	require.NoError(t, os.WriteFile(junk, []byte("definitely not a program"), 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "inspect: give exactly one .pte file\n"},
		{"missing file", []string{filepath.Join(dir, "nope.pte")}, "inspect: open " + filepath.Join(dir, "nope.pte") + ": no such file or directory\n"},
		{"directory", []string{dir}, "inspect: " + dir + " is a directory, not a .pte file\n"},
		{"not a program", []string{junk}, "inspect: read " + junk + `: not an ExecuTorch .pte file: file identifier is "nite", want "ET12"` + "\n"},
		{"unknown backend", []string{junk, "--backend", "coreml"}, `inspect: unknown backend "coreml" (xnnpack, vulkan, qnn, mediatek)` + "\n"},
		{"bad eos", []string{junk, "--backend", "xnnpack", "--eos", "1,x"}, `inspect: --eos "1,x": token id "x" is not a whole number` + "\n"},
		{"empty eos", []string{junk, "--backend", "xnnpack", "--eos", "1,,2"}, `inspect: --eos "1,,2": a token id is empty` + "\n"},
		{"negative bos", []string{junk, "--backend", "xnnpack", "--bos", "-1"}, `inspect: --bos "-1": token id -1 is negative` + "\n"},
		{"huge bos", []string{junk, "--backend", "xnnpack", "--bos", "99999999999999999999"}, `inspect: --bos "99999999999999999999": token id 99999999999999999999 is out of range` + "\n"},
		{"--max-context-len without --backend", []string{junk, "--max-context-len", "4096"},
			"inspect: --max-context-len needs --backend: it is a value the structural check holds the file to, and only --backend xnnpack, vulkan, qnn or mediatek runs that check\n"},
		{"values without --backend", []string{junk, "--max-seq-len", "2048", "--eos", "2", "--max-context-len", "4096"},
			"inspect: --eos, --max-context-len and --max-seq-len need --backend: they are values the structural check holds the file to, and only --backend xnnpack, vulkan, qnn or mediatek runs that check\n"},
		{"fractional bos", []string{junk, "--backend", "xnnpack", "--bos", "1.5"}, `inspect: --bos "1.5": token id "1.5" is not a whole number` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := inspect(t, tc.args...)
			assert.Equal(t, ExitFailed, code)
			assert.Empty(t, out)
			assert.Equal(t, tc.want, errOut)
		})
	}
}

// TestInspectQNNTokens checks BOS and EOS on a program built like Qualcomm's, which holds
// one EOS id in get_eos_id: --eos is held to it with --backend qnn.
func TestInspectQNNTokens(t *testing.T) {
	files := inspectFiles(t)
	tests := []struct {
		name    string
		args    []string
		code    int
		verdict string
	}{
		{"as built", []string{"--bos", "1", "--eos", "2"}, ExitOK, "structural check (qnn): passed"},
		{"other eos", []string{"--eos", "7"}, ExitFailed, "structural check (qnn): failed: metadata get_eos_id is 2, the request was [7]"},
		{"two eos", []string{"--eos", "2,7"}, ExitFailed, "structural check (qnn): failed: metadata get_eos_id is 2, the request was [2 7]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := inspect(t, append([]string{files["qnn-hybrid.pte"], "--backend", "qnn"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stderr %q", errOut)
			assert.Contains(t, out, "\n"+tc.verdict+"\n")
		})
	}
}

// TestInspectCheckFailureOnStderr: a file that fails the structural check exits 2 and says
// why on stderr (and in --result), in text and in JSON mode alike; the output keeps the
// verdict.
func TestInspectCheckFailureOnStderr(t *testing.T) {
	files := inspectFiles(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong window", []string{files["llm-vulkan.pte"], "--backend", "vulkan", "--max-context-len", "1024"},
			"inspect: " + files["llm-vulkan.pte"] + " fails the vulkan structural check: metadata get_max_context_len is 512, the request was 1024"},
		{"wrong window, JSON", []string{files["llm-vulkan.pte"], "--json", "--backend", "vulkan", "--max-context-len", "1024"},
			"inspect: " + files["llm-vulkan.pte"] + " fails the vulkan structural check: metadata get_max_context_len is 512, the request was 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := filepath.Join(t.TempDir(), "result.json")
			out, errOut, code := inspect(t, append(tc.args, "--result", res)...)
			assert.Equal(t, ExitFailed, code)
			assert.Equal(t, tc.want+"\n", errOut)
			assert.Contains(t, out, "get_max_context_len")
			r, err := result.Read(res)
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Reason)
		})
	}
	_, errOut, code := inspect(t, files["llm-vulkan.pte"], "--backend", "vulkan", "--max-context-len", "512")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Empty(t, errOut, "a file that passes says nothing on stderr")
}
