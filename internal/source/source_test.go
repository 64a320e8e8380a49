package source_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func safetensors(shapes map[string][]int64) []byte {
	header := map[string]any{}
	var off int64
	for n, s := range shapes {
		c := int64(2)
		for _, d := range s {
			c *= d
		}
		header[n] = map[string]any{"dtype": "BF16", "shape": s, "data_offsets": []int64{off, off + c}}
		off += c
	}
	h, _ := json.Marshal(header)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), make([]byte, off)...)
}

func seed(t *testing.T) (*hubtest.Server, source.Hub) {
	srv := hubtest.New(t)
	cfg, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"config.json": cfg, "tokenizer.json": []byte("{}"), "LICENSE": []byte("Apache-2.0"), "README.md": []byte("# card"),
		"model.safetensors":    safetensors(map[string][]int64{"a": {1000, 100}, "b": {7}}),
		"original/params.json": []byte("{}"), "unrelated/data.bin": []byte("x"),
	}
	srv.MustAddModel(t, "Qwen/Qwen3-0.6B", files, hubtest.PipelineTag("text-generation"))
	srv.MustAddModel(t, "meta-llama/Llama-3.2-1B-Instruct", files, hubtest.Gated("manual"))
	c := hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true, RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	return srv, source.Hub{Client: c}
}

func TestPlanFromHub(t *testing.T) {
	srv, h := seed(t)
	src, offline, err := source.Open(context.Background(), "Qwen/Qwen3-0.6B", "main", h)
	if err != nil || offline {
		t.Fatalf("open: %v offline=%v", err, offline)
	}
	if src.SHA != srv.Head("Qwen/Qwen3-0.6B") || src.PipelineTag != "text-generation" || !strings.Contains(src.Origin, srv.URL) {
		t.Errorf("source = %+v", src)
	}
	if src.Params == nil || src.Params.Total != 100_007 || src.Params.Source != "the Hub's safetensors total (model info)" {
		t.Errorf("params = %+v", src.Params)
	}
	cfg, _ := config.Default()
	if p := plan.Build(cfg, src, ""); !p.Verdict.Eligible {
		t.Errorf("verdict = %+v", p.Verdict)
	}
	gsrc, _, err := source.Open(context.Background(), "meta-llama/Llama-3.2-1B-Instruct", "main", h)
	if err != nil || !strings.HasPrefix(gsrc.AccessError, "gated repo and the HF_TOKEN account has no access: accept the license at "+srv.URL+"/meta-llama/Llama-3.2-1B-Instruct") {
		t.Fatalf("gated: %+v %v", gsrc, err)
	}
	if v := plan.Build(cfg, gsrc, ""); v.Verdict.Eligible || !strings.HasPrefix(v.Verdict.Reasons[len(v.Verdict.Reasons)-1], "gated repo") {
		t.Errorf("gated verdict = %+v", v.Verdict.Reasons)
	}
	if _, _, err := source.Open(context.Background(), "Qwen/Nope-1B", "main", h); err == nil || !errors.Is(err, hub.ErrRepoNotFound) {
		t.Errorf("missing repo: %v", err)
	}
}

func TestUnreachableFallsBackFast(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	h := source.Hub{Client: hub.New(hub.Options{Endpoint: "http://" + addr, NoEnvToken: true})}
	start := time.Now()
	src, offline, err := source.Open(context.Background(), "Qwen/Qwen3-1.7B", "main", h)
	if err != nil || !offline || !strings.Contains(src.Origin, "embedded snapshot") || !strings.Contains(src.Origin, "could not be reached") {
		t.Fatalf("open: %+v %v %v", src, offline, err)
	}
	// Waiting out the client's default retries (1+2+4+8+8 s) would take 23 s; a refused
	// dial answers at once, so 15 s only fails on that bug, however loaded the machine.
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("fallback took %s", d)
	}
}

func TestFetch(t *testing.T) {
	_, h := seed(t)
	var lines []string
	var mu sync.Mutex
	h.Progress = func(format string, args ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	source.ProgressEvery = 20 * time.Millisecond
	dir := t.TempDir()
	src, err := h.Fetch(context.Background(), "Qwen/Qwen3-0.6B", "main", dir, true)
	if err != nil || src.SHA == "" {
		t.Fatalf("fetch: %+v %v", src, err)
	}
	for _, want := range []string{"config.json", "tokenizer.json", "LICENSE", "model.safetensors", "README.md"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{"unrelated/data.bin", "original/params.json"} {
		if _, err := os.Stat(filepath.Join(dir, not)); err == nil {
			t.Errorf("downloaded %s", not)
		}
	}
	mu.Lock()
	got := strings.Join(lines, "\n")
	mu.Unlock()
	if !strings.Contains(got, "downloaded model.safetensors (") || !strings.Contains(got, "downloaded config.json") {
		t.Errorf("progress lines:\n%s", got)
	}
	gsrc, err := h.Fetch(context.Background(), "meta-llama/Llama-3.2-1B-Instruct", "main", t.TempDir(), false)
	if err != nil || gsrc.AccessError == "" {
		t.Errorf("gated fetch: %+v %v", gsrc, err)
	}
}

func TestWanted(t *testing.T) {
	for path, want := range map[string]bool{
		"model-00001-of-00002.safetensors": true, "config.json": true, "LICENSE.txt": true, "USE_POLICY.md": true,
		"original/consolidated.00.pth": false, "sub/model.safetensors": false, "pytorch_model.bin": false,
	} {
		if got := source.Wanted(path, true); got != want {
			t.Errorf("Wanted(%s, weights) = %v", path, got)
		}
	}
	if !source.Wanted("original/params.json", false) || source.Wanted("model.safetensors", false) {
		t.Error("QNN files")
	}
}
