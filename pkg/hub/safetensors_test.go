package hub_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// TestSafetensorsMetadata counts parameters over the Hub the way plan does: internal/model's
// header reader (the official get_safetensors_metadata algorithm) through RepoFiles' range
// requests. One implementation of the algorithm serves local folders and the Hub alike.
func TestSafetensorsMetadata(t *testing.T) {
	srv := hubtest.New(t)
	single := safetensors(t, map[string]tensor{"embed": {"BF16", []int64{10, 4}}, "norm": {"F32", []int64{4}}}, 0)
	long := safetensors(t, map[string]tensor{"w": {"BF16", []int64{8, 8}}}, 150_000) // header > 100 kB
	shard1 := safetensors(t, map[string]tensor{"a": {"BF16", []int64{2, 3}}, "b": {"BF16", []int64{5}}}, 0)
	shard2 := safetensors(t, map[string]tensor{"c": {"F16", []int64{7}}}, 0)
	index, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 36},
		"weight_map": map[string]string{"a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})
	srv.MustAddModel(t, "org/single", map[string][]byte{"model.safetensors": single})
	srv.MustAddModel(t, "org/long", map[string][]byte{"model.safetensors": long})
	srv.MustAddModel(t, "org/sharded", map[string][]byte{"model.safetensors.index.json": index,
		"model-00001-of-00002.safetensors": shard1, "model-00002-of-00002.safetensors": shard2})
	srv.MustAddModel(t, "org/none", map[string][]byte{"pytorch_model.bin": []byte("x")})
	srv.MustAddModel(t, "org/gated", map[string][]byte{"model.safetensors": single}, hubtest.Gated("auto"))
	srv.MustAddModel(t, "org/tiny", map[string][]byte{"model.safetensors": []byte{1, 2, 3}})
	huge := make([]byte, 16)
	binary.LittleEndian.PutUint64(huge, 30_000_000)
	srv.MustAddModel(t, "org/huge", map[string][]byte{"model.safetensors": huge})

	tests := []struct {
		repo      string
		params    map[string]int64
		ranges    int // GET requests with a Range on the resolve URL or the CDN
		errKind   error
		errSubstr string
	}{
		{repo: "org/single", params: map[string]int64{"BF16": 40, "F32": 4}, ranges: 1},
		{repo: "org/long", params: map[string]int64{"BF16": 64}, ranges: 2},
		{repo: "org/sharded", params: map[string]int64{"BF16": 11, "F16": 7}, ranges: 2},
		{repo: "org/none", errKind: model.ErrNoSafetensors},
		{repo: "org/gated", errKind: hub.ErrGated},
		{repo: "org/tiny", errSubstr: "too small"},
		{repo: "org/huge", errSubstr: "outside 1..25000000"},
	}
	for _, tc := range tests {
		t.Run(tc.repo, func(t *testing.T) {
			before := count(srv, "GET", "/lfs-cdn/")
			got, err := model.CountParams(context.Background(), newClient(srv, "").Files(tc.repo, "main"), nil)
			if tc.errKind != nil || tc.errSubstr != "" {
				if err == nil || (tc.errKind != nil && !errors.Is(err, tc.errKind)) || !strings.Contains(err.Error(), tc.errSubstr) {
					t.Fatalf("err = %v, want %v %q", err, tc.errKind, tc.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := got.ByDtype
			if got.Source != "safetensors headers" || len(p) != len(tc.params) {
				t.Fatalf("params %+v, want %v", got, tc.params)
			}
			for k, v := range tc.params {
				if p[k] != v {
					t.Errorf("%s = %d, want %d", k, p[k], v)
				}
			}
			if n := count(srv, "GET", "/lfs-cdn/") - before; n != tc.ranges {
				t.Errorf("%d range reads, want %d", n, tc.ranges)
			}
		})
	}
}
