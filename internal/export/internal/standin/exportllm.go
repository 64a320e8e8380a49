package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"gopkg.in/yaml.v3"
)

func exportLLM(mode string, args []string) error {
	b, err := os.ReadFile(flag(args, "--config"))
	if err != nil {
		return err
	}
	var c struct {
		Base struct {
			Metadata string `yaml:"metadata"`
			Params   string `yaml:"params"`
		} `yaml:"base"`
		Model struct {
			QuantizeKVCache bool `yaml:"quantize_kv_cache"`
		} `yaml:"model"`
		Export struct {
			MaxSeq     int64  `yaml:"max_seq_length"`
			MaxContext int64  `yaml:"max_context_length"`
			OutputName string `yaml:"output_name"`
		} `yaml:"export"`
		Backend struct {
			Vulkan *struct{} `yaml:"vulkan"`
		} `yaml:"backend"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return err
	}
	var md struct {
		BOS   *int64  `json:"get_bos_id"`
		EOS   []int64 `json:"get_eos_ids"`
		Reset *int64  `json:"get_state_reset_at_zero"`
	}
	if err := json.Unmarshal([]byte(c.Base.Metadata), &md); err != nil {
		return err
	}
	if err := behave(mode); err != nil {
		return err
	}
	bos := int64(-1)
	if md.BOS != nil {
		bos = *md.BOS
	}
	ctx := c.Export.MaxContext
	if mode == "badmeta" {
		ctx /= 2
	}
	meta := ptetest.ExportLLMMetadata(c.Export.MaxSeq, ctx, bos, md.EOS)
	if md.Reset != nil {
		meta = append(meta, ptetest.Meta{Name: "get_state_reset_at_zero", Value: *md.Reset})
	}
	gpu := c.Backend.Vulkan != nil
	backend := "xnnpack"
	if gpu {
		backend = "vulkan"
	}
	weights, err := weightsSize()
	if err != nil {
		return err
	}
	var kv []ptetest.Planned
	if !gpu { // Vulkan's delegate keeps the cache on the GPU, out of the plan
		if kv, err = kvCache(c.Base.Params, int32(c.Export.MaxContext), c.Model.QuantizeKVCache); err != nil {
			return err
		}
	}
	spec, err := ptetest.LLM{Backend: backend, Metadata: meta, WeightsSize: weights, KVCache: kv}.Spec()
	if err != nil {
		return err
	}
	fmt.Println("Lowering to", backend)
	return ptetest.WriteFile(c.Export.OutputName, spec)
}

// kvCache plans the KV cache buffers export_llm's program holds, from the params file's
// shape: every layer but LFM2's convolutions keeps one.
func kvCache(params string, window int32, int8Cache bool) ([]ptetest.Planned, error) {
	b, err := os.ReadFile(params)
	if err != nil {
		return nil, err
	}
	var p struct {
		Layers     int32    `json:"n_layers"`
		Heads      int32    `json:"n_heads"`
		KVHeads    int32    `json:"n_kv_heads"`
		Dim        int32    `json:"dim"`
		HeadDim    int32    `json:"head_dim"`
		LayerTypes []string `json:"layer_types"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", params, err)
	}
	if p.HeadDim == 0 && p.Heads > 0 {
		p.HeadDim = p.Dim / p.Heads
	}
	if p.KVHeads == 0 {
		p.KVHeads = p.Heads
	}
	layers := p.Layers
	for _, t := range p.LayerTypes {
		if t == "conv" {
			layers--
		}
	}
	return ptetest.KVCacheTensors(layers, window, p.KVHeads, p.HeadDim, int8Cache), nil
}

// weightsSize is the weights segment of an export_llm file: 1 MiB, or, with
// STANDIN_PTE_BYTES set, what makes the file about that size (the size a real export of the
// model has, so that a size check sees a file as sized). The segment is sparse on disk.
func weightsSize() (int64, error) {
	v := os.Getenv("STANDIN_PTE_BYTES")
	if v == "" {
		return 1 << 20, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1<<20 {
		return 0, fmt.Errorf("standin: STANDIN_PTE_BYTES=%q is not a size of at least 1 MiB", v)
	}
	return n - 16<<10, nil
}
