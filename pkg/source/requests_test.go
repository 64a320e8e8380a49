package source_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/experimentalmachines/exe-expo/pkg/source"
)

// headerWithPadding is a safetensors file whose header is about pad bytes long, so a test
// can put it above or below the 100 kB speculative read.
func headerWithPadding(pad int) []byte {
	header := map[string]any{
		"__metadata__": map[string]string{"format": "pt", "pad": strings.Repeat("x", pad)},
		"w":            map[string]any{"dtype": "BF16", "shape": []int64{10, 10}, "data_offsets": []int64{0, 200}},
	}
	h, _ := json.Marshal(header)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), make([]byte, 200)...)
}

func shardIndex(shards ...string) []byte {
	wm := map[string]string{}
	for i, s := range shards {
		wm[fmt.Sprintf("t%d", i)] = s
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 400}, "weight_map": wm})
	return b
}

// resolvedFiles names the files a request log read through /resolve/, one entry per
// request (a redirect's CDN hop is the same read and is not counted again), plus "info"
// for each model-info call. Anything else the plan asked for is listed as its path.
func resolvedFiles(t *testing.T, reqs []hubtest.Request) []string {
	t.Helper()
	var out []string
	for _, r := range reqs {
		p, err := url.PathUnescape(strings.SplitN(r.Path, "?", 2)[0])
		require.NoError(t, err)
		_, file, isFile := strings.Cut(p, "/resolve/")
		switch {
		case strings.HasPrefix(p, "/api/models/"):
			out = append(out, "info")
		case isFile:
			_, name, _ := strings.Cut(file, "/") // drop the revision
			out = append(out, name)
		case strings.HasPrefix(p, "/lfs-cdn/"):
			// the CDN hop of an LFS read: the same read as the resolve before it
		default:
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestPlanRequests: opening a Hub model for plan asks the Hub one model info, config.json
// once, generation_config.json only when the repo has one, and one header read per
// safetensors file (a second only for a header past the 100 kB speculative read); it asks
// for no file that the model info says is absent.
func TestPlanRequests(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	small, long := headerWithPadding(100), headerWithPadding(150_000)
	tests := []struct {
		name   string
		files  map[string][]byte
		want   []string
		params string // where the parameter count came from
	}{
		{"one file", map[string][]byte{"config.json": cfg, "model.safetensors": small},
			[]string{"config.json", "info", "model.safetensors"}, "safetensors headers"},
		{"one file with a generation config", map[string][]byte{"config.json": cfg, "generation_config.json": []byte(`{"eos_token_id": 1}`), "model.safetensors": small},
			[]string{"config.json", "generation_config.json", "info", "model.safetensors"}, "safetensors headers"},
		{"two shards", map[string][]byte{"config.json": cfg, "model.safetensors.index.json": shardIndex("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"),
			"model-00001-of-00002.safetensors": small, "model-00002-of-00002.safetensors": small},
			[]string{"config.json", "info", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json"}, "safetensors headers"},
		{"a long header", map[string][]byte{"config.json": cfg, "model.safetensors": long},
			[]string{"config.json", "info", "model.safetensors", "model.safetensors"}, "safetensors headers"},
		{"no weights", map[string][]byte{"config.json": cfg},
			[]string{"config.json", "info"}, "computed from the architecture"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MustAddModel(t, "Qwen/Qwen3-0.6B", tc.files)
			h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true, RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})}
			before := len(srv.Requests())
			src, offline, err := source.Open(context.Background(), "Qwen/Qwen3-0.6B", "main", h)
			require.NoError(t, err)
			require.False(t, offline)
			require.NotNil(t, src.Params)
			assert.Equal(t, tc.params, src.Params.Source)
			reqs := srv.Requests()[before:]
			for _, r := range reqs {
				assert.Less(t, r.Status, 400, "%s %s answered %d", r.Method, r.Path, r.Status)
			}
			assert.Equal(t, tc.want, resolvedFiles(t, reqs), "requests: %+v", reqs)
		})
	}
}

// TestUnlistedFileIsMissingWithoutARequest: a file the model info does not list is missing
// (fs.ErrNotExist and hub.ErrEntryNotFound, as the Hub's 404 would be) in a sentence that
// names the file and the repo, and the Hub is not asked for it.
func TestUnlistedFileIsMissingWithoutARequest(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	srv := hubtest.New(t)
	sha := srv.MustAddModel(t, "Qwen/Qwen3-0.6B", map[string][]byte{"config.json": cfg})
	h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true})}
	_, files, err := h.Source(context.Background(), "Qwen/Qwen3-0.6B", "main")
	require.NoError(t, err)
	before := len(srv.Requests())

	_, err = files.ReadFile(context.Background(), "generation_config.json")
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorIs(t, err, hub.ErrEntryNotFound)
	assert.Equal(t, `file "generation_config.json" is not in Qwen/Qwen3-0.6B at revision `+sha[:12], err.Error())
	_, err = files.ReadRange(context.Background(), "model.safetensors", 0, 8)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	got, err := files.ReadFile(context.Background(), "config.json")
	require.NoError(t, err)
	assert.Equal(t, cfg, got, "config.json as Source read it")
	assert.Len(t, srv.Requests(), before, "the Hub was asked")
}
