package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files: go test ./pkg/cli -run Inspect -update
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

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
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := ptetest.WriteFile(path, spec); err != nil {
			t.Fatal(err)
		}
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
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := inspect(t, append([]string{files[tc.file]}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			golden(t, filepath.Join("testdata", "inspect", tc.golden), out)
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestInspectJSONValues decodes the JSON output and checks the values a caller reads.
func TestInspectJSONValues(t *testing.T) {
	files := inspectFiles(t)
	out, _, code := inspect(t, files["llm-xnnpack.pte"], "--json", "--backend", "xnnpack", "--max-context-len", "4096")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
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
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Metadata["get_max_context_len"] != 4096.0 || !cmp.Equal(v.Metadata["get_eos_ids"], []any{128009.0, 128001.0}) {
		t.Errorf("metadata %v", v.Metadata)
	}
	if v.Methods[0].Name != "forward" || v.Methods[0].Constant || v.Methods[0].Delegates[0].Signature != "XH00" {
		t.Errorf("first method %+v", v.Methods[0])
	}
	if !v.Check.Passed {
		t.Error("check failed")
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pte")
	if err := os.WriteFile(junk, []byte("definitely not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "give exactly one .pte file"},
		{"missing file", []string{filepath.Join(dir, "nope.pte")}, "no such file"},
		{"not a program", []string{junk}, "not an ExecuTorch .pte file"},
		{"unknown backend", []string{junk, "--backend", "coreml"}, `unknown backend "coreml"`},
		{"bad eos", []string{junk, "--backend", "xnnpack", "--eos", "1,x"}, `--eos "1,x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := inspect(t, tc.args...)
			if code != ExitFailed || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
		})
	}
}
