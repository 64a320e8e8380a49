package model_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func source(t *testing.T, id string) *model.Source {
	t.Helper()
	s, err := snapshot.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestArchRealConfigs(t *testing.T) {
	tests := []struct {
		id                                    string
		layers, attn, heads, kv, hd, dim, ffn int64
		vocab                                 int64
		tied                                  bool
		linear                                int64
	}{
		{"Qwen/Qwen3-0.6B", 28, 28, 16, 8, 128, 1024, 3072, 151936, true, 595_984_384},
		{"Qwen/Qwen3-4B", 36, 36, 32, 8, 128, 2560, 9728, 151936, true, 4_022_272_000},
		{"HuggingFaceTB/SmolLM2-360M-Instruct", 32, 32, 15, 5, 64, 960, 2560, 49152, true, 361_758_720},
		{"HuggingFaceTB/SmolLM2-135M-Instruct", 30, 30, 9, 3, 64, 576, 1536, 49152, true, 134_479_872},
		{"meta-llama/Llama-3.2-1B-Instruct", 16, 16, 32, 8, 64, 2048, 8192, 128256, true, 0},
		{"google/gemma-3-1b-it", 26, 26, 4, 1, 256, 1152, 6912, 262144, true, 0},
		// LFM2 without layer_types: built from full_attn_idxs; FFN auto-adjusted 12,288 → 8,192.
		{"LiquidAI/LFM2-1.2B", 16, 6, 32, 8, 64, 2048, 8192, 65536, true, 1_170_210_816},
		{"LiquidAI/LFM2.5-1.2B-Base", 16, 6, 32, 8, 64, 2048, 8192, 65536, true, 1_170_210_816},
		{"Qwen/Qwen3-8B", 36, 36, 32, 8, 128, 4096, 12288, 151936, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			a, err := source(t, tc.id).Config.Arch()
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{a.Layers, a.AttentionLayers(), a.Heads, a.KVHeads, a.HeadDim, a.Dim, a.FFNDim, a.Vocab}
			want := []int64{tc.layers, tc.attn, tc.heads, tc.kv, tc.hd, tc.dim, tc.ffn, tc.vocab}
			if fmt.Sprint(got) != fmt.Sprint(want) || a.Tied != tc.tied {
				t.Errorf("arch = %v tied %v, want %v tied %v", got, a.Tied, want, tc.tied)
			}
			if tc.linear != 0 && a.LinearParams() != tc.linear {
				t.Errorf("linear params = %d, want %d", a.LinearParams(), tc.linear)
			}
		})
	}
}

func TestArchErrorsNameTheField(t *testing.T) {
	// gemma-3-4b-it's text_config leaves the head counts to transformers' defaults: it
	// cannot be sized, but it is not refused as impossible.
	_, err := source(t, "google/gemma-3-4b-it").Config.Arch()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"num_attention_heads"`)
	var ce *model.ConfigError
	assert.False(t, errors.As(err, &ce), "a missing key is not a *ConfigError: %v", err)

	c, err := model.ParseConfig("x", []byte(`{"num_hidden_layers":2,"num_attention_heads":3,"hidden_size":10,"vocab_size":5,"intermediate_size":4}`))
	require.NoError(t, err)
	_, err = c.Arch()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not divisible")
}

// small is a valid config.json that the refusal cases below spoil one key at a time.
const small = `"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"hidden_size":8,"vocab_size":5,"intermediate_size":4`

func TestParseConfigRefusesImpossibleNumbers(t *testing.T) {
	lfm2 := `"model_type":"lfm2","block_auto_adjust_ff_dim":true,"num_attention_heads":4,"hidden_size":8,"vocab_size":5,`
	tests := []struct {
		name, json string
		key, want  string
	}{
		{"null", `null`, "", "not a JSON object: it holds null"},
		{"list", `[1]`, "", "not a JSON object: it holds a list"},
		{"string", `"config"`, "", `not a JSON object: it holds "config"`},
		{"empty", ``, "", "not a JSON object: the file is empty or ends early"},
		{"cut short", `{"a":`, "", "not a JSON object: the file is empty or ends early"},
		{"syntax", `{"a" 1}`, "", "not a JSON object: invalid JSON at byte 6"},
		{"trailing", `{"a":1} {}`, "", "more data follows the object"},
		{"vocab 1e16", `{` + small + `,"vocab_size":10000000000000000}`, "vocab_size", "10000000000000000 is outside 1..4194304"},
		{"layers 2^62", `{` + small + `,"num_hidden_layers":4611686018427387904}`, "num_hidden_layers", "is outside 1..1024"},
		{"layers beyond int64", `{` + small + `,"num_hidden_layers":1e30}`, "num_hidden_layers", "1e30 is outside 1..1024"},
		{"vocab beyond float64", `{` + small + `,"vocab_size":1e400}`, "vocab_size", "1e400 is outside"},
		{"negative hidden", `{` + small + `,"hidden_size":-8}`, "hidden_size", "-8 is outside 1..65536"},
		{"zero heads", `{` + small + `,"num_attention_heads":0}`, "num_attention_heads", "0 is outside 1..1024"},
		{"fractional", `{` + small + `,"head_dim":1.5}`, "head_dim", "is 1.5, not a whole number"},
		{"string number", `{` + small + `,"intermediate_size":"4"}`, "intermediate_size", `is "4", not a whole number`},
		{"bool", `{` + small + `,"vocab_size":true}`, "vocab_size", "is true, not a whole number"},
		{"positions", `{` + small + `,"max_position_embeddings":1000000000}`, "max_position_embeddings", "outside 1..134217728"},
		{"kv heads", `{` + small + `,"num_key_value_heads":3}`, "num_key_value_heads", "3 does not divide num_attention_heads 4"},
		{"kv above heads", `{` + small + `,"num_key_value_heads":8}`, "num_key_value_heads", "8 does not divide num_attention_heads 4"},
		{"layer_types count", `{` + small + `,"layer_types":["conv"]}`, "layer_types", "lists 1 layers, and num_hidden_layers is 2"},
		{"layer_types kind", `{` + small + `,"layer_types":[1,2]}`, "layer_types", "is a list, not a list of layer kinds"},
		{"text_config", `{"text_config":{` + small + `,"vocab_size":0}}`, "text_config.vocab_size", "0 is outside"},
		{"full_attn_idxs", `{` + lfm2 + `"num_hidden_layers":2,"full_attn_idxs":[5]}`, "full_attn_idxs", "lists 5, not a layer index below num_hidden_layers 2"},
		{"full_attn_idxs kind", `{` + lfm2 + `"full_attn_idxs":["x"]}`, "full_attn_idxs", `lists "x", not a layer index`},
		{"ffn multiplier", `{` + lfm2 + `"num_hidden_layers":2,"block_ff_dim":12288,"block_ffn_dim_multiplier":1e6}`, "block_ffn_dim_multiplier", "is 1e6, not a number in (0, 16]"},
		{"ffn rounding", `{` + lfm2 + `"num_hidden_layers":2,"block_ff_dim":12288,"block_multiple_of":0}`, "block_multiple_of", "0 is outside 1..65536"},
		{"ffn width", `{` + lfm2 + `"num_hidden_layers":2,"block_ff_dim":1}`, "block_ff_dim", "gives a feed-forward width of 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := model.ParseConfig("org/m/config.json", []byte(tc.json))
			var ce *model.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "org/m/config.json", ce.File)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "org/m/config.json: "+tc.key), err.Error())
		})
	}
}

func TestParseConfigAcceptsEverySnapshotModel(t *testing.T) {
	for _, id := range snapshot.Models() {
		t.Run(id, func(t *testing.T) {
			src := source(t, id)
			require.NotNil(t, src.Config)
			assert.Equal(t, id+"/config.json", src.Config.File)
		})
	}
}

func TestLoadNamesTheLocalFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{`+small+`,"vocab_size":10000000000000000}`), 0o644))
	err := model.Load(context.Background(), &model.Source{ID: "m"}, model.Dir(dir))
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "config.json")+": vocab_size 10000000000000000 is outside 1..4194304", err.Error())
}

func TestParamsAboveTheBoundAreRefused(t *testing.T) {
	dir := t.TempDir()
	// two shards of one 2^62-element tensor each (headers only): their sum would wrap int64.
	for i, name := range []string{"a", "b"} {
		h := `{"` + name + `":{"dtype":"BF16","shape":[2147483648,2147483648],"data_offsets":[0,0]}}`
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(h)))
		file := filepath.Join(dir, fmt.Sprintf("model-%d.safetensors", i+1))
		require.NoError(t, os.WriteFile(file, append(n[:], h...), 0o644))
	}
	ix := `{"metadata":{},"weight_map":{"a":"model-1.safetensors","b":"model-2.safetensors"}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, model.IndexFile), []byte(ix), 0o644))
	_, err := model.CountParams(context.Background(), model.Dir(dir), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "count more than 1125899906842624 parameters")

	tests := map[string]string{
		`{"total_parameters":9000000000000000000}`: "metadata.total_parameters 9000000000000000000 is more than",
		`{"total_size":9000000000000000000}`:       "metadata.total_size 9000000000000000000 bytes is more than",
	}
	for meta, want := range tests {
		only := t.TempDir()
		ix := `{"metadata":` + meta + `,"weight_map":{"a":"model-1.safetensors"}}`
		require.NoError(t, os.WriteFile(filepath.Join(only, model.IndexFile), []byte(ix), 0o644))
		cfg, err := model.ParseConfig("c", []byte(`{"torch_dtype":"bfloat16"}`))
		require.NoError(t, err)
		_, err = model.CountParams(context.Background(), model.Dir(only), cfg)
		require.Error(t, err, meta)
		assert.Contains(t, err.Error(), want)
	}
}

func TestParamsFromSnapshot(t *testing.T) {
	tests := []struct {
		id       string
		total    int64
		computed bool
		source   string
	}{
		// the snapshot carries the Hub's own totals (internal/snapshot/data/safetensors.json), which
		// the files' own metadata and the count from config.json agree with
		{"Qwen/Qwen3-1.7B", 2_031_739_904, false, "the Hub's safetensors total"},
		{"Qwen/Qwen3-4B", 4_022_468_096, false, "the Hub's safetensors total"},
		{"HuggingFaceTB/SmolLM3-3B", 3_075_098_624, false, "the Hub's safetensors total"},
		// linears + norms (tied) = 361,821,120, the Hub's count
		{"HuggingFaceTB/SmolLM2-360M-Instruct", 361_821_120, false, "the Hub's safetensors total"},
		// no Hub total on record: counted from config.json (total -1: not compared)
		{"Qwen/Qwen3-30B-A3B-FP8", -1, true, "computed"},
	}
	for _, tc := range tests {
		s := source(t, tc.id)
		if s.Params == nil || (tc.total >= 0 && s.Params.Total != tc.total) || s.Params.Computed != tc.computed || !strings.Contains(s.Params.Source, tc.source) {
			t.Errorf("%s: params %+v, want %d computed=%v (%s)", tc.id, s.Params, tc.total, tc.computed, tc.source)
		}
	}
}

func TestSpecialTokens(t *testing.T) {
	bos, eos := source(t, "meta-llama/Llama-3.2-1B-Instruct").SpecialTokens()
	if bos == nil || *bos != 128000 || fmt.Sprint(eos) != "[128001 128008 128009]" {
		t.Errorf("llama bos %v eos %v", bos, eos)
	}
	bos, eos = source(t, "Qwen/Qwen3-1.7B").SpecialTokens()
	if bos == nil || *bos != 151643 || fmt.Sprint(eos) != "[151645 151643]" {
		t.Errorf("qwen3 bos %v eos %v", *bos, eos)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"Qwen/Qwen3-1.7B": true, "meta-llama/Llama-3.2-1B-Instruct": true, "a/b": true,
		"../etc/passwd": false, "Qwen/..": false, "Qwen/Qwen3 1.7B": false, "Qwen": false,
		"Qwen/Qwen3/x": false, "Qwen/$(rm -rf)": false, "Qwen/.hidden": false, "-x/y": false,
		// The dot-trick rule alone refuses these (the characters are all allowed).
		"Qwen/Qwen3..1.7B": false, "Qwen/Qwen3.": false, "Qwen/a...b": false,
	} {
		if got := model.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v", id, got)
		}
	}
}

// writeSafetensors writes a real safetensors file: header plus zeroed data, sparse.
func writeSafetensors(t *testing.T, path string, tensors map[string][]int64, pad int) int64 {
	t.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	var count int64
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	for _, n := range names {
		shape := tensors[n]
		c := int64(1)
		for _, d := range shape {
			c *= d
		}
		count += c
		header[n] = map[string]any{"dtype": "BF16", "shape": shape, "data_offsets": []int64{off, off + 2*c}}
		off += 2 * c
	}
	if pad > 0 {
		header["__metadata__"].(map[string]string)["pad"] = strings.Repeat("x", pad)
	}
	h, _ := json.Marshal(header)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(h)))
	f.Write(n[:])
	f.Write(h)
	if err := f.Truncate(int64(8+len(h)) + off); err != nil {
		t.Fatal(err)
	}
	return count
}

// countingFiles records what a reader asked for.
type countingFiles struct {
	model.Files
	bytes atomic.Int64
}

func (c *countingFiles) ReadRange(ctx context.Context, name string, off, n int64) ([]byte, error) {
	b, err := c.Files.ReadRange(ctx, name, off, n)
	c.bytes.Add(int64(len(b)))
	return b, err
}

func TestCountParamsReadsHeadersOnly(t *testing.T) {
	dir := t.TempDir()
	// 2 shards, one with a header longer than the 100 kB probe, each with ~40 MB of data.
	want := writeSafetensors(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), map[string][]int64{"a": {4096, 4096}, "b": {7}}, 0)
	want += writeSafetensors(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), map[string][]int64{"c": {4096, 5000}}, 150_000)
	ix := `{"metadata":{"total_size":1},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}}`
	os.WriteFile(filepath.Join(dir, model.IndexFile), []byte(ix), 0o644)
	f := &countingFiles{Files: model.Dir(dir)}
	p, err := model.CountParams(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != want || p.ByDtype["BF16"] != want || p.Source != "safetensors headers" {
		t.Errorf("params = %+v, want %d", p, want)
	}
	if got := f.bytes.Load(); got > 400_000 {
		t.Errorf("read %d bytes to count parameters of ~80 MB of shards", got)
	}
	// a single file wins over an index, as in the official client
	single := writeSafetensors(t, filepath.Join(dir, model.SingleFile), map[string][]int64{"x": {3, 5}}, 0)
	if p, _ := model.CountParams(context.Background(), model.Dir(dir), nil); p.Total != single {
		t.Errorf("single file: %+v", p)
	}
}

func TestReadHeaderRejectsMalformed(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
		return name
	}
	le := func(n uint64, rest string) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.LittleEndian, n)
		b.WriteString(rest)
		return b.Bytes()
	}
	exact := func(h string) []byte { return le(uint64(len(h)), h) }
	tests := map[string]struct {
		data []byte
		want string
	}{
		"tiny":      {[]byte{1, 2}, "too small"},
		"huge":      {le(1<<40, "{}"), "outside 1..25000000"},
		"truncated": {le(50, `{"a":`), "file ends after"},
		"not json":  {le(3, "abc"), "not a JSON object"},
		"offsets":   {exact(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}`), "bad data_offsets"},
		"shape":     {exact(`{"a":{"dtype":"F32","shape":[-2,1],"data_offsets":[0,8]}}`), "not a valid tensor shape"},
	}
	for name, tc := range tests {
		_, err := model.ReadHeader(context.Background(), model.Dir(dir), write(name+".safetensors", tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	if _, err := model.CountParams(context.Background(), model.Dir(t.TempDir()), nil); !errors.Is(err, model.ErrNoSafetensors) {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := model.Dir(dir).ReadFile(context.Background(), "../x"); err == nil {
		t.Error("Dir read outside the folder")
	}
}
