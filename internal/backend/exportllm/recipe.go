package exportllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"gopkg.in/yaml.v3"
)

// exportLLM is the subset of the pinned ExecuTorch's LlmConfig the recipe writes, in the
// schema's order; internal/recipe's realsource_test.go merges every golden's YAML strictly into
// the real one.
type exportLLM struct {
	Base struct {
		ModelClass string `yaml:"model_class"`
		Params     string `yaml:"params"`
		Checkpoint string `yaml:"checkpoint"`
		Metadata   string `yaml:"metadata"`
	} `yaml:"base"`
	Model struct {
		DtypeOverride      string `yaml:"dtype_override"`
		EnableDynamicShape bool   `yaml:"enable_dynamic_shape"`
		UseSDPAWithKVCache bool   `yaml:"use_sdpa_with_kv_cache"`
		UseKVCache         bool   `yaml:"use_kv_cache"`
		QuantizeKVCache    bool   `yaml:"quantize_kv_cache,omitempty"`
	} `yaml:"model"`
	Export struct {
		MaxSeqLength     int    `yaml:"max_seq_length"`
		MaxContextLength int    `yaml:"max_context_length"`
		OutputName       string `yaml:"output_name"`
	} `yaml:"export"`
	Quantization struct {
		QMode             *string `yaml:"qmode"`
		EmbeddingQuantize quoted  `yaml:"embedding_quantize"`
		GroupSize         *int    `yaml:"group_size"`
		UseHQQ            bool    `yaml:"use_hqq"`
	} `yaml:"quantization"`
	Backend struct {
		XNNPACK struct {
			Enabled     bool `yaml:"enabled"`
			ExtendedOps bool `yaml:"extended_ops"`
		} `yaml:"xnnpack"`
		Vulkan *struct {
			Enabled bool `yaml:"enabled"`
		} `yaml:"vulkan,omitempty"`
	} `yaml:"backend"`
}

// Recipe is what differs between the backends export_llm builds for: their settings in
// pipeline.yaml, the file name, which delegate the config enables, and how the recipe's
// description names it. Each such backend's folder fills one in and names its Build.
type Recipe struct {
	Settings config.LLMRecipe
	// NameTag goes between the model name and the qmode in the file name ("vulkan"), so the
	// app reads the backend from the name; empty for none.
	NameTag string
	// XNNPACK enables the XNNPACK delegate with extended ops; Vulkan the Vulkan delegate.
	XNNPACK, Vulkan bool
	// Describes ends the recipe's description (", XNNPACK with extended ops").
	Describes string
}

// llmJob is one export_llm run worked out: its plan, qmode and names.
type llmJob struct {
	t      Recipe
	plan   *family.LLMPlan
	qmode  string
	qlabel string
	// kv is how the file keeps its KV cache (the recipe's KVCacheFor the window).
	kv   string
	name string
	seq  int
	lfm2 bool
}

// Build is the recipe builder of one export_llm backend.
func (t Recipe) Build(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
	if fam, err := req.Family(); err == nil && fam.Route.Tool == family.RouteOptimum {
		return t.buildOptimum(cfg, req)
	}
	j, err := t.job(cfg, req)
	if err != nil {
		return nil, err
	}
	bos, eos := req.Source.SpecialTokens()
	expect := &check.Expect{MaxSeqLen: int64(j.seq), MaxContextLen: int64(req.Window), BOS: bos, EOS: eos}
	if t.XNNPACK {
		// XNNPACK leaves the cache to CPU kernels, in forward's planned memory, where the
		// check reads it back; Vulkan's delegate takes sdpa_with_kv_cache and keeps the
		// cache on the GPU, out of the program's plan.
		expect.KVCache = j.kv
	}
	if j.lfm2 {
		expect.Metadata = map[string]any{"get_state_reset_at_zero": int64(1)}
	}
	paramsJSON, err := json.MarshalIndent(j.plan.Params, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	ptePath := filepath.Join(req.Work, j.name)
	checkpoint := filepath.Join(req.Work, "checkpoint", "consolidated.pth")
	yamlBytes, err := j.config(req, ptePath, checkpoint, llmMetadata(bos, eos, j.lfm2))
	if err != nil {
		return nil, err
	}
	folder := req.Backend
	return &recipe.Recipe{
		Backend: req.Backend, Target: "any arm64", Window: req.Window, Label: family.WindowLabel(req.Window), Folder: folder,
		Files: map[string][]byte{
			"params.json":     append(paramsJSON, '\n'),
			"export_llm.yaml": yamlBytes,
		},
		Checkpoint: checkpoint,
		Steps: []recipe.Step{{
			Name: "export_llm", Argv: j.argv(req), Dir: req.Work, Stages: req.Backend,
			Env: map[string]string{"PYTHONUNBUFFERED": "1"},
		}},
		Outputs: []recipe.Output{{From: ptePath, To: path.Join(folder, j.name), Kind: "pte", Expect: expect}},
		Fields:  llmFields(cfg, j, req),
	}, nil
}

// job picks the family's export_llm plan, the qmode (the request's over the recipe's) and
// the file name.
func (t Recipe) job(cfg *config.Config, req recipe.Request) (*llmJob, error) {
	src := req.Source
	fam, err := req.Family()
	if err != nil {
		return nil, err
	}
	plan, err := family.XNNPACKPlan(fam, src.Config)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be exported to %s: %w", src.ID, req.Backend, err)
	}
	if plan.MaxWindow > 0 && req.Window > plan.MaxWindow {
		return nil, fmt.Errorf("%s cannot be exported to %s: %s", src.ID, req.Backend, backend.OverMaxWindow(req.Window, plan.MaxWindow, plan.WindowLimit))
	}
	j := &llmJob{t: t, plan: plan, qmode: t.Settings.QMode, seq: min(cfg.Export.PrefillChunk, req.Window), lfm2: fam.Key == "lfm2"}
	if req.QMode != "" {
		j.qmode = req.QMode
	}
	if !config.KnownQMode(j.qmode) {
		return nil, fmt.Errorf("qmode %q: the recipes know %s", j.qmode, strings.Join(config.QModes(), " and "))
	}
	if req.Codes != "" && j.qmode != "8da4w" {
		return nil, fmt.Errorf("GPTQ codes apply to 8da4w, not %s", j.qmode)
	}
	j.qlabel = j.qmode
	if req.Codes != "" {
		j.qlabel += "-gptq"
	}
	j.kv = req.KVCache
	if j.kv == "" {
		j.kv = t.Settings.KVCacheFor(j.qmode, req.Window)
	}
	if j.kv != sizing.KVFP32 && j.kv != sizing.KVInt8 {
		return nil, fmt.Errorf("KV cache %q: export_llm keeps %s or %s", j.kv, sizing.KVFP32, sizing.KVInt8)
	}
	if j.kv == sizing.KVInt8 && j.qmode == "fp32" {
		return nil, fmt.Errorf("an int8 KV cache with the fp32 recipe: the fp32 fallback keeps nothing quantized")
	}
	if j.kv == sizing.KVInt8 {
		j.qlabel += "-" + KVInt8Tag
	}
	j.name = fileName(src.Name(), t.NameTag, j.qlabel, req.Window)
	return j, nil
}

// llmMetadata is the metadata export_llm writes into the program as getters.
func llmMetadata(bos *int64, eos []int64, lfm2 bool) string {
	meta := tokenMetadata(bos, eos)
	if lfm2 {
		meta["get_state_reset_at_zero"] = 1
	}
	b, _ := json.Marshal(meta)
	return string(b)
}

// tokenMetadata is the BOS and EOS getters the runner reads, for both routes' programs.
func tokenMetadata(bos *int64, eos []int64) map[string]any {
	meta := map[string]any{}
	if bos != nil {
		meta["get_bos_id"] = *bos
	}
	if len(eos) > 0 {
		meta["get_eos_ids"] = eos
	}
	return meta
}

// fileName is a published file's name: model, an optional backend tag, the qmode label and
// the window ("Qwen3-1.7B-vulkan-8da4w-8k.pte"), so the app reads each from the name.
func fileName(stem, tag, qlabel string, window int) string {
	if tag != "" {
		stem += "-" + tag
	}
	return fmt.Sprintf("%s-%s-%s.pte", stem, qlabel, family.WindowLabel(window))
}

// config writes export_llm's YAML config.
func (j *llmJob) config(req recipe.Request, ptePath, checkpoint, metaJSON string) ([]byte, error) {
	rc := j.t.Settings
	var y exportLLM
	y.Base.ModelClass = j.plan.ModelClass
	y.Base.Params = filepath.Join(req.Work, "params.json")
	y.Base.Checkpoint = checkpoint
	y.Base.Metadata = metaJSON
	y.Model.DtypeOverride = "fp32"
	y.Model.EnableDynamicShape = true
	y.Model.UseSDPAWithKVCache = true
	y.Model.UseKVCache = true
	y.Model.QuantizeKVCache = j.kv == sizing.KVInt8
	y.Export.MaxSeqLength = j.seq
	y.Export.MaxContextLength = req.Window
	y.Export.OutputName = ptePath
	if j.qmode == "8da4w" {
		q, g := "8da4w", rc.GroupSize
		y.Quantization.QMode, y.Quantization.GroupSize = &q, &g
	}
	y.Quantization.EmbeddingQuantize = quoted(rc.EmbeddingQuantize)
	y.Quantization.UseHQQ = rc.EmbeddingHQQ
	y.Backend.XNNPACK.Enabled, y.Backend.XNNPACK.ExtendedOps = j.t.XNNPACK, j.t.XNNPACK
	if j.t.Vulkan {
		y.Backend.Vulkan = &struct {
			Enabled bool `yaml:"enabled"`
		}{Enabled: true}
	}
	var yb bytes.Buffer
	enc := yaml.NewEncoder(&yb)
	enc.SetIndent(2)
	if err := enc.Encode(&y); err != nil {
		return nil, fmt.Errorf("encode export_llm config: %w", err)
	}
	return yb.Bytes(), nil
}

// argv runs export_llm through our wrapper: every file gets the token dimension its
// get_max_seq_len says (--full-chunk; stock export_llm bounds it one below, and the stock
// runner's prefill of a prompt longer than a chunk then fails, docs/research/chunked-prefill.md),
// and the wrapper also injects GPTQ codes and fixes LFM2's state reset.
func (j *llmJob) argv(req recipe.Request) []string {
	configPath := filepath.Join(req.Work, "export_llm.yaml")
	argv := []string{req.Python, filepath.Join(req.Work, "drivers", "export_with_codes.py"), "--config", configPath, "--full-chunk"}
	if req.Codes != "" {
		argv = append(argv, "--codes", req.Codes)
	}
	if j.lfm2 {
		argv = append(argv, "--lfm2-state-fix")
	}
	return argv
}

func llmFields(cfg *config.Config, j *llmJob, req recipe.Request) map[string]any {
	rc, qmode := j.t.Settings, j.qmode
	codes := any(nil)
	label := "fp32 linears (not quantized), int8 embeddings"
	desc := fmt.Sprintf("ExecuTorch %s `export_llm`: fp32 weights and activations in every linear (not quantized), int8 per-channel embeddings", cfg.Versions.ExecuTorch)
	qlabel := qmode
	groupSize := any(nil)
	if qmode == "8da4w" {
		groupSize = rc.GroupSize
		codes = "round-to-nearest"
		label = fmt.Sprintf("8da4w-g%d, int8 embeddings, int4 codes rounded to nearest", rc.GroupSize)
		if req.Codes != "" {
			codes, qlabel = "gptq", "8da4w-gptq"
			label = fmt.Sprintf("8da4w-g%d, int8 embeddings, int4 codes solved with GPTQ", rc.GroupSize)
		}
		desc = fmt.Sprintf("ExecuTorch %s `export_llm`: 8-bit dynamic activations and 4-bit weights in groups of %d, int8 per-channel embeddings", cfg.Versions.ExecuTorch, rc.GroupSize)
	}
	desc += j.t.Describes + ", prefill chunk " + strconv.Itoa(j.seq) + ", " + kvText(j.kv) + "."
	if j.kv == sizing.KVInt8 {
		label += ", int8 KV cache"
	}
	return map[string]any{
		"model_class": j.plan.ModelClass, "converter": j.plan.Converter, "params": j.plan.Params,
		"qmode": qlabel, "export_llm_qmode": nilIf(qmode == "fp32", qmode), "group_size": groupSize,
		"embedding_quantize": rc.EmbeddingQuantize, "embedding_hqq": rc.EmbeddingHQQ,
		"int4_codes": codes, "prefill_chunk": j.seq, "kv_cache_dtype": j.kv,
		"label": label, "description": desc,
	}
}

// KVInt8Tag follows the qmode in the name of a file whose KV cache is int8
// ("Qwen3-4B-8da4w-kv8-32k.pte"), so the name alone says which cache a file has.
const KVInt8Tag = "kv8"

// KVCacheOfName is how a published file keeps its KV cache, read from its name: "int8"
// where the qmode is followed by KVInt8Tag, "fp32" otherwise.
func KVCacheOfName(name string) string {
	if strings.Contains(path.Base(name), "-"+KVInt8Tag+"-") {
		return sizing.KVInt8
	}
	return sizing.KVFP32
}

// kvText is how the recipe's description names the cache.
func kvText(kv string) string {
	if kv == sizing.KVInt8 {
		return "int8 KV cache (per token and KV head, with an fp32 scale and an int8 zero point)"
	}
	return "fp32 KV cache"
}

func nilIf(cond bool, v any) any {
	if cond {
		return nil
	}
	return v
}

// quoted is a string written in double quotes, so "8,0" can never be read as anything but
// a string by OmegaConf's YAML loader.
type quoted string

func (q quoted) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: string(q)}, nil
}
