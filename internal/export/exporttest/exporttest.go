// Package exporttest gives tests of the export (here and in the CLI) a model folder and
// the stand-in ExecuTorch toolchain. It is for tests only.
package exporttest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Modes are the stand-in's behaviours, one python-<mode> link each.
var Modes = []string{"ok", "fail", "sleep", "hog-300", "badmeta", "oldet", "noet", "norecord", "stray", "noqdq", "wrongsha"}

// BuildStandin compiles the stand-in toolchain into dir and links python-<mode> to it.
func BuildStandin(dir string) error {
	_, self, _, _ := runtime.Caller(0)
	pkg := filepath.Join(filepath.Dir(self), "..", "internal", "standin")
	bin := filepath.Join(dir, "standin")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build stand-in: %v\n%s", err, out)
	}
	for _, m := range Modes {
		if err := os.Symlink(bin, filepath.Join(dir, "python-"+m)); err != nil {
			return err
		}
	}
	return nil
}

// snapshotFile reads a file of the embedded snapshot's source tree.
func snapshotFile(id, name string) ([]byte, error) {
	_, self, _, _ := runtime.Caller(0)
	return os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "snapshot", "data", strings.Replace(id, "/", "__", 1), name))
}

// cardLicenses are the license lines of the snapshot models' real model cards (README.md
// front matter), which the export records and publish requires.
var cardLicenses = map[string]string{
	"HuggingFaceTB/SmolLM2-135M-Instruct":       "license: apache-2.0\n",
	"HuggingFaceTB/SmolLM2-360M-Instruct":       "license: apache-2.0\n",
	"HuggingFaceTB/SmolLM3-3B":                  "license: apache-2.0\n",
	"LiquidAI/LFM2-1.2B":                        "license: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n",
	"LiquidAI/LFM2-350M":                        "license: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n",
	"LiquidAI/LFM2.5-1.2B-Base":                 "license: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n",
	"Qwen/Qwen2.5-0.5B-Instruct":                qwenApache("Qwen/Qwen2.5-0.5B-Instruct"),
	"Qwen/Qwen2.5-1.5B":                         qwenApache("Qwen/Qwen2.5-1.5B"),
	"Qwen/Qwen2.5-VL-3B-Instruct":               "license: other\nlicense_name: qwen-research\nlicense_link: https://huggingface.co/Qwen/Qwen2.5-VL-3B-Instruct/blob/main/LICENSE\n",
	"Qwen/Qwen3-0.6B":                           qwenApache("Qwen/Qwen3-0.6B"),
	"Qwen/Qwen3-1.7B":                           qwenApache("Qwen/Qwen3-1.7B"),
	"Qwen/Qwen3-4B":                             qwenApache("Qwen/Qwen3-4B"),
	"Qwen/Qwen3-8B":                             qwenApache("Qwen/Qwen3-8B"),
	"Qwen/Qwen3-30B-A3B":                        qwenApache("Qwen/Qwen3-30B-A3B"),
	"Qwen/Qwen3-30B-A3B-FP8":                    qwenApache("Qwen/Qwen3-30B-A3B-FP8"),
	"Qwen/Qwen3.5-0.8B":                         qwenApache("Qwen/Qwen3.5-0.8B"),
	"Qwen/Qwen3.5-2B":                           qwenApache("Qwen/Qwen3.5-2B"),
	"Qwen/Qwen3.5-4B":                           qwenApache("Qwen/Qwen3.5-4B"),
	"google/gemma-3-1b-it":                      "license: gemma\n",
	"google/gemma-3-270m-it":                    "license: gemma\n",
	"google/gemma-3-4b-it":                      "license: gemma\n",
	"meta-llama/Llama-3.2-1B-Instruct":          "license: llama3.2\n",
	"meta-llama/Llama-4-Scout-17B-16E-Instruct": "license: other\nlicense_name: llama4\n",
	"microsoft/Phi-4-mini-instruct":             "license: mit\n",
}

func qwenApache(id string) string {
	return "license: apache-2.0\nlicense_link: https://huggingface.co/" + id + "/blob/main/LICENSE\n"
}

// Card is a model card for id: YAML front matter carrying the license of id's real card,
// and a line saying what the folder is. ok is false for a model the snapshot lacks.
func Card(id string) (card []byte, ok bool) {
	l, ok := cardLicenses[id]
	if !ok {
		return nil, false
	}
	return []byte("---\n" + l + "---\n\n# " + id + " (test stand-in)\n\nA test folder with " + id + "'s real configuration and tiny weights.\n"), true
}

// ModelDir writes a model folder for id: its real config.json and generation_config.json,
// a model card (README.md) with the real card's license, a tokenizer, a license file, and a
// real safetensors file naming every tensor of the architecture (tiny shapes).
func ModelDir(t testing.TB, id string) string {
	t.Helper()
	card, ok := Card(id)
	if !ok {
		t.Fatalf("exporttest has no model card license for %s: add the real card's to cardLicenses", id)
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(id))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := snapshotFile(id, "config.json")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", cfg)
	if g, err := snapshotFile(id, "generation_config.json"); err == nil {
		write("generation_config.json", g)
	}
	write("README.md", card)
	write("tokenizer.json", []byte(`{"model":{}}`))
	write("LICENSE", []byte("Apache License 2.0\n"))
	var c struct {
		Layers int `json:"num_hidden_layers"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	names := []string{"model.embed_tokens.weight", "model.norm.weight"}
	for i := 0; i < c.Layers; i++ {
		for _, s := range []string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "self_attn.q_norm", "self_attn.k_norm", "input_layernorm", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"} {
			names = append(names, fmt.Sprintf("model.layers.%d.%s.weight", i, s))
		}
	}
	header := map[string]any{}
	for i, n := range names {
		header[n] = map[string]any{"dtype": "BF16", "shape": []int{1}, "data_offsets": []int{2 * i, 2*i + 2}}
	}
	h, _ := json.Marshal(header)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	b = append(append(b, h...), make([]byte, 2*len(names))...)
	write("model.safetensors", b)
	return dir
}
