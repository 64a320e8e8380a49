package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

func TestSnapshot(t *testing.T) {
	ms := Models()
	if len(ms) < 15 || !Has("Qwen/Qwen3-1.7B") || Has("Qwen/Qwen9") {
		t.Fatalf("models = %v", ms)
	}
	for _, id := range ms {
		if _, err := Load(context.Background(), id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	// Every family the openweights app chats with plans offline.
	for _, id := range []string{"Qwen/Qwen3.5-0.8B", "Qwen/Qwen3.5-2B", "Qwen/Qwen3.5-4B", "google/gemma-3-270m-it",
		"google/gemma-3-1b-it", "LiquidAI/LFM2-350M", "LiquidAI/LFM2.5-1.2B-Base"} {
		if !Has(id) {
			t.Errorf("the snapshot lacks %s", id)
		}
	}
	_, err := Files("Qwen/Qwen9-7B")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "Qwen/Qwen3-1.7B") || !strings.HasSuffix(err.Error(), ")") {
		t.Errorf("unknown model: %v", err)
	}
	f, _ := Files("Qwen/Qwen3-1.7B")
	whole, _ := f.ReadFile(context.Background(), "config.json")
	part, err := f.ReadRange(context.Background(), "config.json", 2, 10)
	if err != nil || string(part) != string(whole[2:12]) {
		t.Errorf("range = %q, %v", part, err)
	}
	if tail, _ := f.ReadRange(context.Background(), "config.json", int64(len(whole))-3, 10); len(tail) != 3 {
		t.Errorf("short read at the end: %d bytes", len(tail))
	}
	if _, err := f.ReadFile(context.Background(), "../x"); err == nil {
		t.Error("read outside the model")
	}
	if _, err := f.ReadFile(context.Background(), "model.safetensors"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestHubTotals holds the Hub totals the snapshot carries (data/safetensors.json) to what
// they must be: one for every model but the four data/README.md names, each the sum of its
// dtype split, each equal to what the model's own index says where it has one, and for
// every dense text model the tensors its config.json describes (the linears, embedding and
// norms internal/model computes, the embedding twice where the checkpoint stores a tied head
// again) within the biases and norms that count leaves out (0.01%, or two hidden-size and
// two head-size vectors a layer: Gemma 3's pre/post feed-forward and q/k norms).
func TestHubTotals(t *testing.T) {
	ctx := context.Background()
	all, err := Totals()
	if err != nil {
		t.Fatal(err)
	}
	without := map[string]bool{"Qwen/Qwen3-30B-A3B-FP8": true,
		"Qwen/Qwen3.5-0.8B": true, "Qwen/Qwen3.5-2B": true, "Qwen/Qwen3.5-4B": true}
	// multimodal or mixture-of-experts: config.json does not describe every tensor
	notDense := map[string]bool{"Qwen/Qwen3-30B-A3B": true, "Qwen/Qwen2.5-VL-3B-Instruct": true,
		"google/gemma-3-4b-it": true, "meta-llama/Llama-4-Scout-17B-16E-Instruct": true}
	for id := range all {
		if !Has(id) {
			t.Errorf("safetensors.json names %s, which the snapshot does not hold", id)
		}
	}
	for _, id := range Models() {
		tot, ok := all[id]
		if !ok {
			if !without[id] {
				t.Errorf("%s: no Hub total in safetensors.json", id)
			}
			continue
		}
		var sum int64
		for _, n := range tot.Parameters {
			sum += n
		}
		if sum != tot.Total || tot.Total <= 0 || tot.Evidence == "" {
			t.Errorf("%s: total %d, dtype split sums to %d, evidence %q", id, tot.Total, sum, tot.Evidence)
		}
		src, err := Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if src.Params == nil || src.Params.Total != tot.Total || src.Params.Computed || src.ParamsError != "" ||
			!strings.Contains(src.Params.Source, "the Hub's safetensors total") {
			t.Errorf("%s: Load gives params %+v (error %q), want the Hub's %d", id, src.Params, src.ParamsError, tot.Total)
		}
		f, _ := Files(id)
		if ix, err := model.ReadIndex(ctx, f); err == nil {
			if v, ok := ix.Metadata["total_parameters"]; ok {
				if n, _ := v.Int64(); n != tot.Total {
					t.Errorf("%s: index total_parameters %d, Hub total %d", id, n, tot.Total)
				}
			} else if size, _ := ix.Metadata["total_size"].Int64(); size != 2*tot.Total {
				t.Errorf("%s: index total_size %d B is not 2 B (bf16) × %d", id, size, tot.Total)
			}
		}
		if notDense[id] {
			continue
		}
		a, err := src.Config.Arch()
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		c := a.ComputedParams()
		// What the count leaves out is biases and per-layer norms: within 0.01%, or for a
		// small model with large norms (Gemma 3's pre/post feed-forward and q/k norms) at
		// most two hidden-size and two head-size vectors a layer.
		norms := a.Layers * (2*a.Dim + 2*a.HeadDim)
		near := func(n int64) bool {
			return tot.Total >= n && (float64(tot.Total-n) <= 1e-4*float64(tot.Total) || tot.Total-n <= norms)
		}
		if !near(c) && !near(c+a.EmbeddingParams()) {
			t.Errorf("%s: Hub total %d is neither the config's %d tensors nor %d with the tied head stored again", id, tot.Total, c, c+a.EmbeddingParams())
		}
	}
	if src, _ := Load(ctx, "Qwen/Qwen3-30B-A3B-FP8"); src == nil || src.Params == nil || !src.Params.Computed {
		t.Errorf("FP8 checkpoint without a Hub total: %+v", src)
	}
}
