package hub

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Limits of the official client's get_safetensors_metadata (protocols.md A.6).
const (
	// safetensorsFirstRead is the first range read: it covers the header ~97% of the time.
	safetensorsFirstRead = 100_001
	// MaxSafetensorsHeader is SAFETENSORS_MAX_HEADER_LENGTH.
	MaxSafetensorsHeader = 25_000_000
	// maxShards is hf.js's cap on the number of shards of one index.
	maxShards = 10_000
)

// ErrNotSafetensors means the repo has neither model.safetensors nor its sharded index.
var ErrNotSafetensors = errors.New("not a safetensors repo")

// TensorInfo is one tensor entry of a safetensors header.
type TensorInfo struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Parameters is the number of elements of the tensor.
func (t TensorInfo) Parameters() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// SafetensorsFile is the parsed header of one safetensors file.
type SafetensorsFile struct {
	Metadata map[string]string
	Tensors  map[string]TensorInfo
}

// ParameterCount is the number of parameters per dtype in the file.
func (f SafetensorsFile) ParameterCount() map[string]int64 {
	out := map[string]int64{}
	for _, t := range f.Tensors {
		out[t.DType] += t.Parameters()
	}
	return out
}

// SafetensorsRepo is the safetensors metadata of a repo: one file or a sharded index.
type SafetensorsRepo struct {
	Sharded bool
	// Metadata is the index's "metadata" (usually total_size); nil for a single file.
	Metadata map[string]any
	// WeightMap maps every tensor to the file that holds it.
	WeightMap map[string]string
	// Files holds the parsed header of every file.
	Files map[string]SafetensorsFile
}

// ParameterCount is the parameters per dtype summed over all files, like the Hub's
// safetensors.parameters.
func (r *SafetensorsRepo) ParameterCount() map[string]int64 {
	out := map[string]int64{}
	for _, f := range r.Files {
		for k, v := range f.ParameterCount() {
			out[k] += v
		}
	}
	return out
}

// Totals is ParameterCount with its sum, in the shape of ModelInfo.Safetensors.
func (r *SafetensorsRepo) Totals() ParamTotals {
	p := r.ParameterCount()
	var total int64
	for _, v := range p {
		total += v
	}
	return ParamTotals{Parameters: p, Total: total}
}

// SafetensorsMetadata reads the safetensors headers of a repo by range requests, as the
// official get_safetensors_metadata does: model.safetensors if it exists, else every
// distinct shard of model.safetensors.index.json in parallel; a gated repo is an error.
func (c *Client) SafetensorsMetadata(ctx context.Context, repo, rev string) (*SafetensorsRepo, error) {
	single, err := c.FileExists(ctx, repo, rev, "model.safetensors")
	if err != nil {
		return nil, err
	}
	if single {
		f, err := c.SafetensorsFileMetadata(ctx, repo, rev, "model.safetensors")
		if err != nil {
			return nil, err
		}
		wm := make(map[string]string, len(f.Tensors))
		for name := range f.Tensors {
			wm[name] = "model.safetensors"
		}
		return &SafetensorsRepo{WeightMap: wm, Files: map[string]SafetensorsFile{"model.safetensors": *f}}, nil
	}
	const index = "model.safetensors.index.json"
	sharded, err := c.FileExists(ctx, repo, rev, index)
	if err != nil {
		return nil, err
	}
	if !sharded {
		return nil, fmt.Errorf("hub: %s@%s has neither model.safetensors nor %s: %w", repo, rev, index, ErrNotSafetensors)
	}
	return c.shardedMetadata(ctx, repo, rev, index)
}

func (c *Client) shardedMetadata(ctx context.Context, repo, rev, index string) (*SafetensorsRepo, error) {
	raw, err := c.ReadFile(ctx, repo, rev, index)
	if err != nil {
		return nil, err
	}
	var idx struct {
		Metadata  map[string]any    `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("hub: parse %s of %s: %w", index, repo, err)
	}
	shards := distinct(idx.WeightMap)
	if len(shards) > maxShards {
		return nil, fmt.Errorf("hub: %s of %s names %d shards, more than %d", index, repo, len(shards), maxShards)
	}
	files, err := c.parseShards(ctx, repo, rev, shards)
	if err != nil {
		return nil, err
	}
	return &SafetensorsRepo{Sharded: true, Metadata: idx.Metadata, WeightMap: idx.WeightMap, Files: files}, nil
}

func distinct(wm map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range wm {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// parseShards reads the shard headers with at most c.parallel requests in flight.
func (c *Client) parseShards(ctx context.Context, repo, rev string, shards []string) (map[string]SafetensorsFile, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		files = make(map[string]SafetensorsFile, len(shards))
		first error
		wg    sync.WaitGroup
		sem   = make(chan struct{}, c.parallel)
	)
	for _, name := range shards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f, err := c.SafetensorsFileMetadata(ctx, repo, rev, name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
					cancel()
				}
				return
			}
			files[name] = *f
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return files, nil
}

// SafetensorsFileMetadata reads one file's header: bytes 0-100000 first, and a second range
// read only when the header is longer than that.
func (c *Client) SafetensorsFileMetadata(ctx context.Context, repo, rev, path string) (*SafetensorsFile, error) {
	head, err := c.ReadRange(ctx, repo, rev, path, 0, safetensorsFirstRead)
	if err != nil {
		return nil, err
	}
	header, err := headerBytes(head, path, func(n int64) ([]byte, error) {
		return c.ReadRange(ctx, repo, rev, path, 8, n)
	})
	if err != nil {
		return nil, fmt.Errorf("hub: %s of %s: %w", path, repo, err)
	}
	return ParseSafetensorsHeader(header)
}

// headerBytes cuts the JSON header out of the first read, or fetches it with more.
func headerBytes(head []byte, path string, more func(n int64) ([]byte, error)) ([]byte, error) {
	if len(head) < 8 {
		return nil, fmt.Errorf("safetensors file is too small (%d bytes)", len(head))
	}
	n := binary.LittleEndian.Uint64(head[:8])
	if n == 0 || n > MaxSafetensorsHeader {
		return nil, fmt.Errorf("safetensors header length %d is outside 1..%d", n, MaxSafetensorsHeader)
	}
	if int64(n) <= int64(len(head)-8) {
		return head[8 : 8+n], nil
	}
	b, err := more(int64(n))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != int64(n) {
		return nil, fmt.Errorf("safetensors header of %s: got %d bytes, header says %d", path, len(b), n)
	}
	return b, nil
}

// ParseSafetensorsHeader decodes a safetensors JSON header; __metadata__ is the free
// string map, every other key a tensor.
func ParseSafetensorsHeader(b []byte) (*SafetensorsFile, error) {
	b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parse safetensors header: %w", err)
	}
	f := &SafetensorsFile{Tensors: make(map[string]TensorInfo, len(raw))}
	for k, v := range raw {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &f.Metadata); err != nil {
				return nil, fmt.Errorf("parse safetensors __metadata__: %w", err)
			}
			continue
		}
		var t struct {
			DType       *string   `json:"dtype"`
			Shape       []int64   `json:"shape"`
			DataOffsets *[2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, fmt.Errorf("parse safetensors tensor %q: %w", k, err)
		}
		if t.DType == nil || t.Shape == nil || t.DataOffsets == nil {
			return nil, fmt.Errorf("parse safetensors tensor %q: missing dtype, shape or data_offsets", k)
		}
		f.Tensors[k] = TensorInfo{DType: *t.DType, Shape: t.Shape, DataOffsets: *t.DataOffsets}
	}
	return f, nil
}
