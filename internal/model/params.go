package model

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Safetensors file names, as the Hub and the official client use them.
const (
	SingleFile = "model.safetensors"
	IndexFile  = "model.safetensors.index.json"
)

// Limits of the official client: one speculative read covers most headers; a header longer
// than 25 MB is refused rather than allocated.
const (
	headerProbeBytes = 100_001 // "Range: bytes=0-100000", as the official client asks
	maxHeaderBytes   = 25_000_000
	maxShards        = 10_000
)

// ErrNoSafetensors means the repo has neither model.safetensors nor its sharded index.
var ErrNoSafetensors = errors.New("no model.safetensors or model.safetensors.index.json")

// ErrTextNotCounted means the checkpoint is a multimodal wrapper whose text model alone is
// exported (Config.LeftOut), and only the index metadata's total, which counts the vision
// tower too, is at hand: the text model's count has to be computed from the architecture.
var ErrTextNotCounted = errors.New("the safetensors index metadata counts the whole multimodal checkpoint, and only its text model is exported")

// Params is a parameter count and where it came from, so `plan` can say how sure it is.
type Params struct {
	Total   int64            `json:"total"`
	ByDtype map[string]int64 `json:"by_dtype,omitempty"`
	// Source says how Total was found: "safetensors headers", "safetensors index
	// metadata", or "computed from the architecture".
	Source   string `json:"source"`
	Computed bool   `json:"computed,omitempty"`
}

// Tensor is one safetensors header entry.
type Tensor struct {
	Dtype       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// Header is a parsed safetensors header.
type Header struct {
	Metadata map[string]string
	Tensors  map[string]Tensor
}

// ReadHeader reads a safetensors header by range reads: one speculative read of 100 kB,
// and a second one only when the header is longer.
func ReadHeader(ctx context.Context, f Files, name string) (*Header, error) {
	body, err := f.ReadRange(ctx, name, 0, headerProbeBytes)
	if err != nil {
		return nil, err
	}
	if len(body) < 8 {
		return nil, fmt.Errorf("%s: file is too small to be safetensors (%d bytes)", name, len(body))
	}
	n := binary.LittleEndian.Uint64(body[:8])
	if n == 0 || n > maxHeaderBytes {
		return nil, fmt.Errorf("%s: header length %d is outside 1..%d bytes", name, n, maxHeaderBytes)
	}
	var raw []byte
	if int64(n) <= int64(len(body)-8) {
		raw = body[8 : 8+n]
	} else {
		raw, err = f.ReadRange(ctx, name, 8, int64(n))
		if err != nil {
			return nil, err
		}
		if uint64(len(raw)) < n {
			return nil, fmt.Errorf("%s: header says %d bytes, file ends after %d", name, n, len(raw))
		}
	}
	return parseHeader(name, raw)
}

func parseHeader(name string, raw []byte) (*Header, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("%s: its header is not a JSON object: %s", name, fileutil.Reason(err))
	}
	h := &Header{Tensors: make(map[string]Tensor, len(entries))}
	for k, v := range entries {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &h.Metadata); err != nil {
				return nil, fmt.Errorf("%s: its __metadata__ is not an object of strings: %s", name, fileutil.Reason(err))
			}
			continue
		}
		var t Tensor
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, fmt.Errorf("%s: tensor %q in its header: %s", name, k, fileutil.Reason(err))
		}
		if t.Dtype == "" || len(t.DataOffsets) != 2 || t.DataOffsets[0] > t.DataOffsets[1] || t.DataOffsets[0] < 0 {
			return nil, fmt.Errorf("%s: tensor %q has no dtype or bad data_offsets %v", name, k, t.DataOffsets)
		}
		if _, err := t.Count(); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", name, k, err)
		}
		h.Tensors[k] = t
	}
	return h, nil
}

// Count is the number of elements.
func (t Tensor) Count() (int64, error) {
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > (1<<62)/d) {
			return 0, fmt.Errorf("shape %v is not a valid tensor shape", t.Shape)
		}
		n *= d
	}
	return n, nil
}

// Index is model.safetensors.index.json.
type Index struct {
	Metadata  map[string]json.Number `json:"metadata"`
	WeightMap map[string]string      `json:"weight_map"`
}

// Shards lists the distinct shard files, sorted.
func (ix *Index) Shards() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ix.WeightMap {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// ReadIndex reads and checks the sharded index.
func ReadIndex(ctx context.Context, f Files) (*Index, error) {
	b, err := f.ReadFile(ctx, IndexFile)
	if err != nil {
		return nil, err
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("%s is not a safetensors index: %s", IndexFile, fileutil.Reason(err))
	}
	if len(ix.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: weight_map is empty", IndexFile)
	}
	for _, s := range ix.Shards() {
		if !fs.ValidPath(s) || !strings.HasSuffix(s, ".safetensors") {
			return nil, fmt.Errorf("%s: shard name %q is not a safetensors file in the repo", IndexFile, s)
		}
	}
	if n := len(ix.Shards()); n > maxShards {
		return nil, fmt.Errorf("%s: %d shards is more than %d", IndexFile, n, maxShards)
	}
	return &ix, nil
}

// CountParams finds the exact parameter count from safetensors headers, as the official
// client does: model.safetensors when present, else every shard of the index. When the
// shards are not at hand (a local folder with only the index) it falls back to the index
// metadata: total_parameters, or total_size divided by the bytes of cfg's torch_dtype. For
// a multimodal wrapper whose text model is exported (cfg.LeftOut) it counts the text model
// only, and has no answer from the index metadata (ErrTextNotCounted).
func CountParams(ctx context.Context, f Files, cfg *Config) (Params, error) {
	var leftOut []string
	if cfg != nil {
		leftOut = cfg.LeftOut()
	}
	h, err := ReadHeader(ctx, f, SingleFile)
	if err == nil {
		return sumHeaders([]*Header{h}, leftOut)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Params{}, err
	}
	ix, err := ReadIndex(ctx, f)
	if errors.Is(err, fs.ErrNotExist) {
		return Params{}, ErrNoSafetensors
	}
	if err != nil {
		return Params{}, err
	}
	headers, err := readShards(ctx, f, ix.Shards())
	if err == nil {
		return sumHeaders(headers, leftOut)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Params{}, err
	}
	if len(leftOut) > 0 {
		return Params{}, ErrTextNotCounted
	}
	return fromIndexMetadata(ix, cfg)
}

func readShards(ctx context.Context, f Files, shards []string) ([]*Header, error) {
	headers := make([]*Header, len(shards))
	errs := make([]error, len(shards))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			headers[i], errs[i] = ReadHeader(ctx, f, s)
		}()
	}
	wg.Wait()
	return headers, errors.Join(errs...)
}

// sumHeaders adds up every tensor but those under the leftOut prefixes, refusing a total
// above MaxParams before it can wrap.
func sumHeaders(hs []*Header, leftOut []string) (Params, error) {
	p := Params{ByDtype: map[string]int64{}, Source: "safetensors headers"}
	if len(leftOut) > 0 {
		p.Source = fmt.Sprintf("safetensors headers, text model only (%s* left out)", strings.Join(leftOut, "*, "))
	}
	for _, h := range hs {
		for name, t := range h.Tensors {
			if hasAnyPrefix(name, leftOut) {
				continue
			}
			n, _ := t.Count()
			if n > MaxParams-p.Total {
				return Params{}, fmt.Errorf("the safetensors headers count more than %d parameters, which no checkpoint has", int64(MaxParams))
			}
			p.ByDtype[t.Dtype] += n
			p.Total += n
		}
	}
	return p, nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var dtypeBytes = map[string]int64{"bfloat16": 2, "float16": 2, "float32": 4, "BF16": 2, "F16": 2, "F32": 4}

func fromIndexMetadata(ix *Index, cfg *Config) (Params, error) {
	if v, ok := ix.Metadata["total_parameters"]; ok {
		if n, err := v.Int64(); err == nil && n > 0 {
			if n > MaxParams {
				return Params{}, fmt.Errorf("%s: metadata.total_parameters %d is more than %d, which no checkpoint has", IndexFile, n, int64(MaxParams))
			}
			return Params{Total: n, Source: "safetensors index metadata (total_parameters)"}, nil
		}
	}
	size, err := ix.Metadata["total_size"].Int64()
	if err != nil || size <= 0 {
		return Params{}, fmt.Errorf("%s: no shard headers at hand and no total_size in its metadata", IndexFile)
	}
	dtype := ""
	if cfg != nil {
		dtype = cfg.String("torch_dtype")
		if dtype == "" {
			dtype = cfg.String("dtype")
		}
	}
	b, ok := dtypeBytes[dtype]
	if !ok {
		return Params{}, fmt.Errorf("%s: no shard headers at hand, and config.json's dtype %q does not say how many bytes a parameter takes", IndexFile, dtype)
	}
	if size/b > MaxParams {
		return Params{}, fmt.Errorf("%s: metadata.total_size %d bytes is more than %d parameters, which no checkpoint has", IndexFile, size, int64(MaxParams))
	}
	return Params{Total: size / b, Source: fmt.Sprintf("safetensors index metadata (total_size / %d bytes per %s)", b, dtype)}, nil
}
