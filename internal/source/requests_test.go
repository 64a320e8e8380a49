package source_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
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
		opts   []hubtest.RepoOption
		want   []string
		params string // where the parameter count came from
	}{
		// the model info's safetensors totals give the count: no header is read
		{"one file", map[string][]byte{"config.json": cfg, "model.safetensors": small}, nil,
			[]string{"config.json", "info"}, "the Hub's safetensors total (model info)"},
		{"one file with a generation config", map[string][]byte{"config.json": cfg, "generation_config.json": []byte(`{"eos_token_id": 1}`), "model.safetensors": small}, nil,
			[]string{"config.json", "generation_config.json", "info"}, "the Hub's safetensors total (model info)"},
		{"two shards", map[string][]byte{"config.json": cfg, "model.safetensors.index.json": shardIndex("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"),
			"model-00001-of-00002.safetensors": small, "model-00002-of-00002.safetensors": small}, nil,
			[]string{"config.json", "info"}, "the Hub's safetensors total (model info)"},
		// a repo the Hub has not indexed: the headers are read, a long one continued
		{"one file, no totals in the info", map[string][]byte{"config.json": cfg, "model.safetensors": small}, []hubtest.RepoOption{hubtest.NoSafetensorsInInfo()},
			[]string{"config.json", "info", "model.safetensors"}, "safetensors headers"},
		{"a long header, no totals in the info", map[string][]byte{"config.json": cfg, "model.safetensors": long}, []hubtest.RepoOption{hubtest.NoSafetensorsInInfo()},
			[]string{"config.json", "info", "model.safetensors", "model.safetensors"}, "safetensors headers"},
		{"no weights", map[string][]byte{"config.json": cfg}, nil,
			[]string{"config.json", "info"}, "computed from the architecture"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MustAddModel(t, "Qwen/Qwen3-0.6B", tc.files, tc.opts...)
			h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true, RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})}
			before, decodes := len(srv.Requests()), model.Decodes()
			src, offline, err := source.Open(context.Background(), "Qwen/Qwen3-0.6B", "main", h)
			require.NoError(t, err)
			assert.Equal(t, int64(1), model.Decodes()-decodes, "config.json is decoded once, whichever way it came")
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

// requestLabels names every HTTP request of a log, the CDN hop of an LFS read included:
// "info" for model info, the file's path for a /resolve/ read, "cdn" for the LFS redirect's
// second request; sorted, since shards are read at once.
func requestLabels(t *testing.T, reqs []hubtest.Request) []string {
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
			out = append(out, "cdn")
		default:
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestPlanRequestCount counts every HTTP request `plan` makes to open a Hub model, an LFS
// read being a resolve and its CDN hop. huggingface.co's model info carries a summary of
// config.json, not the file, so config.json is still read there: a one-file repo costs 4
// (info, config.json, and the header's resolve and CDN hop), two shards 7, a header past
// the 100 kB speculative read 6. A server whose model info holds config.json whole saves
// that request: 3, 6 and 5. A gated repo reads config.json whatever the info holds: it is
// the access check.
func TestPlanRequestCount(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	// A spelling that a re-encoding would lose: the plan must keep it either way.
	cfg = bytes.Replace(cfg, []byte(`"rope_theta": 1000000,`), []byte(`"rope_theta": 1000000.0,`), 1)
	require.Contains(t, string(cfg), "1000000.0")
	small, long := headerWithPadding(100), headerWithPadding(150_000)
	oneFile := map[string][]byte{"config.json": cfg, "model.safetensors": small}
	shards := map[string][]byte{"config.json": cfg, "model.safetensors.index.json": shardIndex("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"),
		"model-00001-of-00002.safetensors": small, "model-00002-of-00002.safetensors": small}
	longHeader := map[string][]byte{"config.json": cfg, "model.safetensors": long}
	whole := hubtest.WholeConfigInInfo()
	tests := []struct {
		name  string
		files map[string][]byte
		opts  []hubtest.RepoOption
		want  []string
	}{
		{"one file, the Hub's summary config", oneFile, nil,
			[]string{"config.json", "info"}},
		{"one file, config.json whole in the info", oneFile, []hubtest.RepoOption{whole},
			[]string{"info"}},
		{"two shards, the Hub's summary config", shards, nil,
			[]string{"config.json", "info"}},
		{"two shards, config.json whole in the info", shards, []hubtest.RepoOption{whole},
			[]string{"info"}},
		{"two shards, no totals in the info", shards, []hubtest.RepoOption{hubtest.NoSafetensorsInInfo()},
			[]string{"cdn", "cdn", "config.json", "info", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json"}},
		{"a long header, the Hub's summary config", longHeader, nil,
			[]string{"config.json", "info"}},
		{"a long header, no totals in the info", longHeader, []hubtest.RepoOption{hubtest.NoSafetensorsInInfo()},
			[]string{"cdn", "cdn", "config.json", "info", "model.safetensors", "model.safetensors"}},
		{"a long header, config.json whole in the info", longHeader, []hubtest.RepoOption{whole},
			[]string{"info"}},
		{"gated, config.json whole in the info", oneFile, []hubtest.RepoOption{whole, hubtest.Gated("auto"), hubtest.Authorize("reader")},
			[]string{"config.json", "info"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.AddToken("hf_reader", hubtest.Token{User: "reader"})
			srv.MustAddModel(t, "Qwen/Qwen3-0.6B", tc.files, tc.opts...)
			h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, Token: "hf_reader", RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})}
			before, decodes := len(srv.Requests()), model.Decodes()
			src, offline, err := source.Open(context.Background(), "Qwen/Qwen3-0.6B", "main", h)
			require.NoError(t, err)
			assert.Equal(t, int64(1), model.Decodes()-decodes, "config.json is decoded once, whichever way it came")
			require.False(t, offline)
			require.Empty(t, src.AccessError)
			reqs := srv.Requests()[before:]
			assert.Equal(t, tc.want, requestLabels(t, reqs), "requests: %+v", reqs)
			// The plan is the same whichever way config.json came.
			require.NotNil(t, src.Config)
			assert.Equal(t, "Qwen/Qwen3-0.6B/config.json", src.Config.File)
			assert.Equal(t, "qwen3", src.Config.String("model_type"))
			f, err := src.Config.Features()
			require.NoError(t, err)
			assert.Equal(t, "1000000.0", f.RopeTheta.String(), "rope_theta as written")
			require.NotNil(t, src.Params)
			weights := 0
			for name := range tc.files {
				if strings.HasSuffix(name, ".safetensors") {
					weights++
				}
			}
			assert.Equal(t, int64(100*weights), src.Params.Total, "each file holds 100 parameters")
		})
	}
}

// TestInfoConfigStandsForConfigJSONOnlyWhenWhole: the model info's config replaces the
// config.json request only when it is evidently the whole file (transformers_version, no
// tokenizer_config, an architecture plan reads); the Hub's summary and anything short of
// the file cost the request and give the file's answer.
func TestInfoConfigStandsForConfigJSONOnlyWhenWhole(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	var full map[string]any
	require.NoError(t, json.Unmarshal(cfg, &full))
	without := func(keys ...string) []byte {
		m := map[string]any{}
		for k, v := range full {
			m[k] = v
		}
		for _, k := range keys {
			delete(m, k)
		}
		b, _ := json.Marshal(m)
		return b
	}
	tokenizer := []byte(`{"bos_token": null, "eos_token": "<|im_end|>", "chat_template": "{{ messages }}"}`)
	tests := []struct {
		name     string
		files    map[string][]byte
		whole    bool
		wantRead bool // config.json was asked for
	}{
		{"the Hub's summary", map[string][]byte{"config.json": cfg, "tokenizer_config.json": tokenizer}, false, true},
		{"whole", map[string][]byte{"config.json": cfg}, true, false},
		{"whole, without transformers_version", map[string][]byte{"config.json": without("transformers_version")}, true, true},
		{"whole, without the sizes plan reads", map[string][]byte{"config.json": without("hidden_size", "num_hidden_layers")}, true, true},
		{"whole, with a tokenizer_config merged in", map[string][]byte{"config.json": append(without()[:len(without())-1], []byte(`,"tokenizer_config":{"eos_token":"x"}}`)...)}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			var opts []hubtest.RepoOption
			if tc.whole {
				opts = append(opts, hubtest.WholeConfigInInfo())
			}
			srv.MustAddModel(t, "Qwen/Qwen3-0.6B", tc.files, opts...)
			h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true})}
			before := len(srv.Requests())
			_, files, err := h.Source(context.Background(), "Qwen/Qwen3-0.6B", "main")
			require.NoError(t, err)
			assert.Equal(t, tc.wantRead, slices.Contains(requestLabels(t, srv.Requests()[before:]), "config.json"))
			got, err := files.ReadFile(context.Background(), "config.json")
			require.NoError(t, err)
			assert.JSONEq(t, string(tc.files["config.json"]), string(got), "config.json as plan sees it")
		})
	}
}

// TestLongHeaderContinuesWhereTheFirstReadStopped: a safetensors header longer than the
// speculative read (Range: bytes=0-100000) is read on from byte 100001 to its end, not
// again from the start, and the two reads join into the file's bytes; a read inside the
// bytes already held asks nothing.
func TestLongHeaderContinuesWhereTheFirstReadStopped(t *testing.T) {
	long := headerWithPadding(150_000)
	n := int64(binary.LittleEndian.Uint64(long[:8]))
	require.Greater(t, n, int64(100_001))
	type read struct{ off, n int64 }
	tests := []struct {
		name       string
		reads      []read
		wantRanges []string // the Range of each read the Hub was asked for
	}{
		{"plan's header read", []read{{0, 100_001}, {8, n}},
			[]string{"bytes=0-100000", fmt.Sprintf("bytes=100001-%d", 8+n-1)}},
		{"inside the first read", []read{{0, 100_001}, {8, 1000}},
			[]string{"bytes=0-100000"}},
		{"past the end of the file", []read{{0, 100_001}, {100_000, int64(len(long))}},
			[]string{"bytes=0-100000", fmt.Sprintf("bytes=100001-%d", 100_000+int64(len(long))-1)}},
		{"elsewhere in the file", []read{{0, 1000}, {5000, 100}},
			[]string{"bytes=0-999", "bytes=5000-5099"}},
		{"a file read twice from the start", []read{{0, 1000}, {0, 1000}, {0, 1000}},
			[]string{"bytes=0-999", "bytes=0-999"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			srv.MustAddModel(t, "org/m", map[string][]byte{"config.json": []byte(`{}`), "model.safetensors": long})
			h := source.Hub{Client: hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true})}
			_, files, err := h.Source(context.Background(), "org/m", "main")
			require.NoError(t, err)
			before := len(srv.Requests())
			for _, r := range tc.reads {
				got, err := files.ReadRange(context.Background(), "model.safetensors", r.off, r.n)
				require.NoError(t, err)
				want := long[min(r.off, int64(len(long))):min(r.off+r.n, int64(len(long)))]
				require.Equal(t, want, got, "bytes %d+%d", r.off, r.n)
			}
			var ranges []string
			for _, q := range srv.Requests()[before:] {
				if strings.Contains(q.Path, "/resolve/") { // its CDN hop carries the same Range
					ranges = append(ranges, q.Range)
				}
			}
			assert.Equal(t, tc.wantRanges, ranges)
		})
	}
}
