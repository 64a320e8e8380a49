package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/plan"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/plan -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (go test ./pkg/plan -update to accept):\n%s", name, got)
	}
}

func TestPlanGolden(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Qwen/Qwen3-1.7B", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "google/gemma-3-1b-it", "LiquidAI/LFM2.5-1.2B-Base"} {
		t.Run(id, func(t *testing.T) {
			src, offline, err := plan.Open(context.Background(), id, "main", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !offline || !strings.Contains(src.Origin, "embedded snapshot hf-configs-") {
				t.Errorf("offline=%v origin=%q", offline, src.Origin)
			}
			p := plan.Build(cfg, src, "")
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			name := strings.ReplaceAll(id, "/", "__")
			golden(t, name+".txt", text.Bytes())
			js, _ := json.MarshalIndent(p, "", "  ")
			golden(t, name+".json", append(js, '\n'))
		})
	}
}

func TestPlanRows(t *testing.T) {
	cfg, _ := config.Default()
	src, _, err := plan.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Build(cfg, src, "xnnpack")
	if len(p.Backends) != 1 || p.Backends[0].Backend != "xnnpack" || len(p.Backends[0].Rows) != 5 {
		t.Fatalf("backends = %+v", p.Backends)
	}
	r := p.Backends[0].Rows[4]
	if r.Window != 32768 || r.KVCacheBytes != 7_516_192_768 || r.FitsPhone {
		t.Errorf("32k row = %+v", r)
	}
	// 32k needs the largest ARM runner and its swap; 2k fits the 8-vCPU one.
	if !r.UsesSwap || r.Runner != "blacksmith-32vcpu-ubuntu-2404-arm" || p.Backends[0].Rows[0].Runner != "blacksmith-8vcpu-ubuntu-2404-arm" {
		t.Errorf("runners: 2k %q, 32k %q swap=%v", p.Backends[0].Rows[0].Runner, r.Runner, r.UsesSwap)
	}
	m := plan.Build(cfg, src, "mediatek").Backends[0]
	if m.Rows[0].Window != 512 || len(m.Rows[0].Chunks) != 4 || m.Rows[5].Skip == "" {
		t.Errorf("mediatek rows: %+v", m.Rows)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, _, err := plan.Open(ctx, t.TempDir(), "main", nil); err == nil || !strings.Contains(err.Error(), "without config.json") {
		t.Errorf("folder without config: %v", err)
	}
	if _, _, err := plan.Open(ctx, "not a model", "main", nil); err == nil || !strings.Contains(err.Error(), "neither a local model folder nor") {
		t.Errorf("bad id: %v", err)
	}
	if _, _, err := plan.Open(ctx, "Qwen/Qwen9-7B", "main", nil); err == nil || !strings.Contains(err.Error(), "not in the embedded snapshot") {
		t.Errorf("unknown offline: %v", err)
	}
	// a local folder: config.json plus a real safetensors header
	dir := t.TempDir()
	cfgJSON, _ := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	os.WriteFile(filepath.Join(dir, "config.json"), cfgJSON, 0o644)
	src, offline, err := plan.Open(ctx, dir, "main", nil)
	if err != nil || offline || !strings.HasPrefix(src.Origin, "local folder ") {
		t.Fatalf("local: %+v %v %v", src, offline, err)
	}
	if src.Params == nil || !src.Params.Computed {
		t.Errorf("local folder without weights: params %+v", src.Params)
	}
	var _ model.Files = model.Dir(dir)
}

// fakeHub answers like a Hub client would: one model, or unreachable.
type fakeHub struct{ err error }

func (h fakeHub) Source(ctx context.Context, id, rev string) (*model.Source, model.Files, error) {
	if h.err != nil {
		return nil, nil, h.err
	}
	dir := filepath.Join("..", "snapshot", "data", strings.Replace(id, "/", "__", 1))
	return &model.Source{ID: id, Revision: rev, SHA: "abc123", PipelineTag: "text-generation", Origin: "Hugging Face Hub"}, model.Dir(dir), nil
}

func TestOpenHub(t *testing.T) {
	ctx := context.Background()
	src, offline, err := plan.Open(ctx, "Qwen/Qwen3-0.6B", "main", fakeHub{})
	if err != nil || offline || src.SHA != "abc123" || src.Config == nil {
		t.Fatalf("hub: %+v %v %v", src, offline, err)
	}
	src, offline, err = plan.Open(ctx, "Qwen/Qwen3-0.6B", "main", fakeHub{err: plan.ErrUnreachable})
	if err != nil || !offline || !strings.Contains(src.Origin, "could not be reached") {
		t.Fatalf("unreachable: %+v %v %v", src, offline, err)
	}
}
