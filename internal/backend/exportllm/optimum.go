package exportllm

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
)

// optimumPlan is drivers/optimum_export.py's plan.
type optimumPlan struct {
	Model      string         `json:"model"`
	Out        string         `json:"out"`
	Window     int            `json:"window"`
	MaxSeqLen  int            `json:"max_seq_len"`
	QLinear    *string        `json:"qlinear"`
	QEmbedding string         `json:"qembedding"`
	Metadata   map[string]any `json:"metadata"`
}

// OptimumGroupSize is the one group size optimum-executorch's text-generation task
// quantizes linears in (its quantize_model_ default; the task passes no other).
const OptimumGroupSize = 32

// optimumJob is one optimum-executorch export worked out.
type optimumJob struct {
	qmode, name string
	seq         int
}

// buildOptimum is the recipe of a family export_llm cannot build (Gemma 3, SmolLM3):
// drivers/optimum_export.py runs optimum-executorch's text-generation task and xnnpack
// recipe on the downloaded folder itself (no converted checkpoint), as ExecuTorch's own CI
// exports these models, and writes the metadata optimum leaves out.
func (t Recipe) buildOptimum(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
	if !t.XNNPACK {
		return nil, fmt.Errorf("%s cannot be exported to %s: optimum-executorch builds it for XNNPACK only", req.Source.ID, req.Backend)
	}
	j, err := t.optimumJob(cfg, req)
	if err != nil {
		return nil, err
	}
	bos, eos := req.Source.SpecialTokens()
	ptePath := filepath.Join(req.Work, j.name)
	p := optimumPlan{Model: req.SourceDir, Out: ptePath, Window: req.Window, MaxSeqLen: j.seq, QEmbedding: "8w", Metadata: tokenMetadata(bos, eos)}
	if j.qmode == "8da4w" {
		q := "8da4w"
		p.QLinear = &q
	}
	planJSON, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the optimum-executorch plan: %w", err)
	}
	folder := req.Backend
	expect := &check.Expect{MaxSeqLen: int64(j.seq), MaxContextLen: int64(req.Window), BOS: bos, EOS: eos}
	return &recipe.Recipe{
		Backend: req.Backend, Target: "any arm64", Window: req.Window, Label: family.WindowLabel(req.Window), Folder: folder,
		Files: map[string][]byte{"optimum_export.json": append(planJSON, '\n')},
		Steps: []recipe.Step{{
			Name: family.OptimumStep, Dir: req.Work, Stages: req.Backend,
			Argv: []string{req.Python, filepath.Join(req.Work, "drivers", drivers.OptimumExportScript), filepath.Join(req.Work, "optimum_export.json")},
			Env:  map[string]string{"PYTHONUNBUFFERED": "1"},
		}},
		Outputs: []recipe.Output{{From: ptePath, To: path.Join(folder, j.name), Kind: "pte", Expect: expect}},
		Fields:  optimumFields(cfg, j, t.Settings),
	}, nil
}

// optimumJob checks what optimum-executorch can build against the request: 8da4w in groups
// of 32 or fp32 linears, int8 per-token embeddings, an fp32 cache, no GPTQ codes.
func (t Recipe) optimumJob(cfg *config.Config, req recipe.Request) (*optimumJob, error) {
	rc, id := t.Settings, req.Source.ID
	j := &optimumJob{qmode: rc.QMode}
	if req.QMode != "" {
		j.qmode = req.QMode
	}
	switch {
	case j.qmode != "8da4w" && j.qmode != "fp32":
		return nil, fmt.Errorf("qmode %q: optimum-executorch's route builds 8da4w and fp32", j.qmode)
	case req.Codes != "":
		return nil, fmt.Errorf("%s: GPTQ codes are injected into export_llm's model, and optimum-executorch builds this family", id)
	case j.qmode == "8da4w" && rc.GroupSize != OptimumGroupSize:
		return nil, fmt.Errorf("group size %d: optimum-executorch's text-generation task quantizes in groups of %d only", rc.GroupSize, OptimumGroupSize)
	case rc.EmbeddingQuantize != "8,0":
		return nil, fmt.Errorf("embedding_quantize %q: optimum-executorch's route keeps int8 per-token embeddings (\"8,0\") only", rc.EmbeddingQuantize)
	case req.KVCache != "" && req.KVCache != sizing.KVFP32:
		return nil, fmt.Errorf("KV cache %q: optimum-executorch's custom cache is fp32 only", req.KVCache)
	}
	j.seq = min(cfg.Export.PrefillChunk, req.Window)
	if a, err := req.Source.Config.Arch(); err == nil && a.SlidingLayers() > 0 {
		// optimum bounds a call's tokens by the sliding layers' window too
		j.seq = min(j.seq, int(a.SlidingWindowLen))
	}
	j.name = fileName(req.Source.Name(), "", j.qmode, req.Window)
	return j, nil
}

func optimumFields(cfg *config.Config, j *optimumJob, rc config.LLMRecipe) map[string]any {
	how := fmt.Sprintf("optimum-executorch %s (xnnpack recipe, custom SDPA and KV cache) on ExecuTorch %s", family.OptimumVersion, cfg.Versions.ExecuTorch)
	label, desc, group := "fp32 linears (not quantized), int8 embeddings", how+": fp32 weights and activations in every linear (not quantized), int8 per-token embeddings", any(nil)
	codes := any(nil)
	if j.qmode == "8da4w" {
		group, codes = OptimumGroupSize, "round-to-nearest"
		label = fmt.Sprintf("8da4w-g%d, int8 embeddings, int4 codes rounded to nearest", OptimumGroupSize)
		desc = fmt.Sprintf("%s: 8-bit dynamic activations and 4-bit weights in groups of %d, int8 per-token embeddings", how, OptimumGroupSize)
	}
	desc += fmt.Sprintf(", XNNPACK, prefill chunk %d, fp32 KV cache.", j.seq)
	return map[string]any{
		"route": family.RouteOptimum, "optimum_executorch": family.OptimumVersion,
		"qmode": j.qmode, "group_size": group, "embedding_quantize": rc.EmbeddingQuantize,
		"int4_codes": codes, "prefill_chunk": j.seq, "kv_cache_dtype": sizing.KVFP32,
		"label": label, "description": desc,
	}
}
