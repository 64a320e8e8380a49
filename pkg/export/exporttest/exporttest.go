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
var Modes = []string{"ok", "fail", "sleep", "hog-300", "badmeta", "oldet", "noet", "norecord", "stray"}

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

// ModelDir writes a model folder for id: its real config.json and generation_config.json,
// a tokenizer, a license, and a real safetensors file naming every tensor of the
// architecture (tiny shapes).
func ModelDir(t testing.TB, id string) string {
	t.Helper()
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
