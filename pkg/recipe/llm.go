package recipe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/experimentalmachines/exe-expo/pkg/check"
	"github.com/experimentalmachines/exe-expo/pkg/config"
	"github.com/experimentalmachines/exe-expo/pkg/family"
)

// exportLLM is the subset of ExecuTorch 1.4.0's LlmConfig the recipe writes, in the
// schema's order; every key here exists in LlmConfig (testdata/llm_config_keys.txt).
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

func buildLLM(cfg *config.Config, req Request) (*Recipe, error) {
	src := req.Source
	fam := family.ByArchitecture(src.Config.Architectures())
	if fam == nil {
		return nil, fmt.Errorf("%s: architecture %v has no recipe", src.ID, src.Config.Architectures())
	}
	plan, err := family.XNNPACKPlan(fam, src.Config)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be exported to %s: %w", src.ID, req.Backend, err)
	}
	if reason, ok := fam.Unsupported[req.Backend]; ok {
		return nil, fmt.Errorf("%s cannot be exported to %s: %s", src.ID, req.Backend, reason)
	}
	rc := cfg.Export.XNNPACK
	if req.Backend == "vulkan" {
		rc = cfg.Export.Vulkan
	}
	qmode := rc.QMode
	if req.QMode != "" {
		qmode = req.QMode
	}
	if qmode != "8da4w" && qmode != "fp32" {
		return nil, fmt.Errorf("qmode %q: the recipes know 8da4w and fp32", qmode)
	}
	if req.Codes != "" && qmode != "8da4w" {
		return nil, fmt.Errorf("GPTQ codes apply to 8da4w, not %s", qmode)
	}
	label := family.WindowLabel(req.Window)
	qlabel := qmode
	if req.Codes != "" {
		qlabel += "-gptq"
	}
	name := fmt.Sprintf("%s-%s-%s.pte", src.Name(), qlabel, label)
	if req.Backend == "vulkan" {
		name = fmt.Sprintf("%s-vulkan-%s-%s.pte", src.Name(), qlabel, label)
	}
	seq := min(cfg.Export.PrefillChunk, req.Window)
	bos, eos := src.SpecialTokens()
	meta := map[string]any{}
	expect := &check.Expect{MaxSeqLen: int64(seq), MaxContextLen: int64(req.Window), BOS: bos, EOS: eos}
	if bos != nil {
		meta["get_bos_id"] = *bos
	}
	if len(eos) > 0 {
		meta["get_eos_ids"] = eos
	}
	lfm2 := fam.Key == "lfm2"
	if lfm2 {
		meta["get_state_reset_at_zero"] = 1
		expect.Metadata = map[string]any{"get_state_reset_at_zero": int64(1)}
	}
	metaJSON, _ := json.Marshal(meta)
	paramsJSON, err := json.MarshalIndent(plan.Params, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	ptePath := join(req.Work, name)
	checkpoint := join(req.Work, "checkpoint", "consolidated.pth")

	var y exportLLM
	y.Base.ModelClass = plan.ModelClass
	y.Base.Params = join(req.Work, "params.json")
	y.Base.Checkpoint = checkpoint
	y.Base.Metadata = string(metaJSON)
	y.Model.DtypeOverride = "fp32"
	y.Model.EnableDynamicShape = true
	y.Model.UseSDPAWithKVCache = true
	y.Model.UseKVCache = true
	y.Export.MaxSeqLength = seq
	y.Export.MaxContextLength = req.Window
	y.Export.OutputName = ptePath
	if qmode == "8da4w" {
		q, g := "8da4w", rc.GroupSize
		y.Quantization.QMode, y.Quantization.GroupSize = &q, &g
	}
	y.Quantization.EmbeddingQuantize = quoted(rc.EmbeddingQuantize)
	y.Quantization.UseHQQ = rc.EmbeddingHQQ
	if req.Backend == "xnnpack" {
		y.Backend.XNNPACK.Enabled, y.Backend.XNNPACK.ExtendedOps = true, true
	} else {
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
	yamlBytes := yb.Bytes()
	configPath := join(req.Work, "export_llm.yaml")
	argv := []string{req.Python, "-m", "executorch.extension.llm.export.export_llm", "--config", configPath}
	if req.Codes != "" || lfm2 {
		argv = []string{req.Python, join(req.Work, "drivers", "export_with_codes.py"), "--config", configPath}
		if req.Codes != "" {
			argv = append(argv, "--codes", req.Codes)
		}
		if lfm2 {
			argv = append(argv, "--lfm2-state-fix")
		}
	}
	folder := req.Backend
	r := &Recipe{
		Backend: req.Backend, Target: "any arm64", Window: req.Window, Label: label, Folder: folder,
		Files: map[string][]byte{
			"params.json":     append(paramsJSON, '\n'),
			"export_llm.yaml": yamlBytes,
		},
		Checkpoint: checkpoint,
		Steps: []Step{{
			Name: "export_llm", Argv: argv, Dir: req.Work, Stages: req.Backend,
			Env: map[string]string{"PYTHONUNBUFFERED": "1"},
		}},
		Outputs: []Output{{From: ptePath, To: repoPath(folder, name), Kind: "pte", Expect: expect}},
		Fields:  llmFields(cfg, plan, rc, qmode, req, seq),
	}
	return r, nil
}

func llmFields(cfg *config.Config, plan *family.LLMPlan, rc config.LLMRecipe, qmode string, req Request, seq int) map[string]any {
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
	if req.Backend == "xnnpack" {
		desc += ", XNNPACK with extended ops"
	} else {
		desc += ", the Vulkan delegate"
	}
	desc += ", prefill chunk " + strconv.Itoa(seq) + ", fp32 KV cache."
	return map[string]any{
		"model_class": plan.ModelClass, "converter": plan.Converter, "params": plan.Params,
		"qmode": qlabel, "export_llm_qmode": nilIf(qmode == "fp32", qmode), "group_size": groupSize,
		"embedding_quantize": rc.EmbeddingQuantize, "embedding_hqq": rc.EmbeddingHQQ,
		"int4_codes": codes, "prefill_chunk": seq, "kv_cache_dtype": "fp32",
		"label": label, "description": desc,
	}
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
