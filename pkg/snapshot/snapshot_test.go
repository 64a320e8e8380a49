package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
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
