package mediatek

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
)

// Build is the recipe builder of MediaTek NeuroPilot exports.
func Build(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
	mt := cfg.Export.MediaTek
	src := req.Source
	chip, ok := cfg.Chips[req.SoC]
	if !ok || chip.Backend != req.Backend {
		return nil, fmt.Errorf("unknown MediaTek chip %q (configured: %s)", req.SoC, strings.Join(mt.SoCs, ", "))
	}
	if req.Window < mt.PromptTokens {
		return nil, fmt.Errorf("window %d is below the %d-token prompt graph", req.Window, mt.PromptTokens)
	}
	fam, err := req.Family()
	if err != nil {
		return nil, err
	}
	plan, err := family.MediaTekPlan(fam, src.Config, mt.MaxChunks)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be exported to mediatek: %w", src.ID, err)
	}
	if req.ExecuTorch == "" || req.MTKPython == "" {
		return nil, fmt.Errorf("the MediaTek recipe needs the ExecuTorch source tree (Request.ExecuTorch) and the MediaTek tool python (Request.MTKPython)")
	}
	a, err := src.Config.Arch()
	if err != nil {
		return nil, err
	}
	weightsName := src.Name()
	weights := filepath.Join(req.Work, "weights", weightsName)
	prep := mtkPrepare(req, fam.Key, plan.Script, weights)
	examples := prep.Copy
	cfgJSON, err := weightsConfig(src.Config, plan)
	if err != nil {
		return nil, err
	}
	label := family.WindowLabel(req.Window)
	folder := "mtk/" + strings.ToLower(req.SoC)
	prec := mt.Precision
	exp := fmt.Sprintf("%s_%s_%d_chunks", weightsName, prec, plan.Chunks)
	w := strconv.Itoa(req.Window)
	argv := []string{req.MTKPython, filepath.Join("model_export_scripts", plan.Script), filepath.Join(weights, "config.json"),
		"--precision", prec, "--num_chunks", strconv.Itoa(plan.Chunks),
		"--dataset", mt.Calibration, "--response_cap", strconv.Itoa(mt.ResponseCap),
		"--preformatter", filepath.Join("aot_utils", "llm_utils", "preformatter_templates", plan.Preformatter),
		"-shapes", strconv.Itoa(mt.PromptTokens) + "t" + w + "c", "1t" + w + "c", "--platform", chip.Platform}
	var outs []recipe.Output
	for i := 0; i < plan.Chunks; i++ {
		name := fmt.Sprintf("%s-neuropilot-%s-%s-chunk%dof%d.pte", src.Name(), strings.ToLower(prec), label, i+1, plan.Chunks)
		outs = append(outs, recipe.Output{
			From: filepath.Join(examples, "pte", exp, fmt.Sprintf("%s_%d.pte", exp, i)), To: path.Join(folder, name), Kind: "pte",
			Expect: &check.Expect{MediaTek: check.MediaTekChunk{Exp: exp, PromptTokens: mt.PromptTokens, Window: req.Window, Chunk: i}},
		})
	}
	outs = append(outs, recipe.Output{
		From: filepath.Join(weights, "embedding_"+weightsName+"_fp32.bin"), To: path.Join(folder, src.Name()+"-neuropilot-embedding-fp32.bin"),
		Kind: "embedding", Bytes: a.Vocab * a.Dim * 4,
	})
	lib := filepath.Join(filepath.Dir(filepath.Dir(req.MTKPython)), "lib", "python"+cfg.Versions.MTKPython, "site-packages", "mtk_neuron", "lib")
	return &recipe.Recipe{
		Backend: req.Backend, Target: req.SoC, TargetName: chip.Name, Window: req.Window, Label: label, Folder: folder,
		Files:   map[string][]byte{filepath.Join("weights", weightsName, "config.json"): cfgJSON},
		Prepare: prep,
		Steps: []recipe.Step{{Name: "neuropilot_export", Argv: argv, Dir: examples, Stages: req.Backend,
			Env: map[string]string{"PYTHONUNBUFFERED": "1", "LD_LIBRARY_PATH": lib}}},
		Outputs: outs,
		Fields:  mtkFields(cfg, req, plan, prep, chip.Name, mtkRunner(cfg, req, a)),
	}, nil
}

// mtkRunner is what the app's MediaTek runner needs to drive the chunks, as the config.json
// variant's runner block carries it (docs/research/reference.md: the reference's section
// 8.2). Publish adds the file paths. BOS is the source's; the stop token is config.json's
// eos_token_id (the first when it lists several), else the first of all stop tokens.
func mtkRunner(cfg *config.Config, req recipe.Request, a model.Arch) map[string]any {
	bos, eos := req.Source.SpecialTokens()
	var eosToken any
	if ids := model.IDs(req.Source.Config.Top["eos_token_id"]); len(ids) > 0 {
		eosToken = ids[0]
	} else if len(eos) > 0 {
		eosToken = eos[0]
	}
	var bosToken any
	if bos != nil {
		bosToken = *bos
	}
	var ropeBase any
	if a.RopeTheta != "" {
		ropeBase = a.RopeTheta
	}
	layout := "uniform"
	if a.LayerTypes != nil { // layers of more than one kind: conv state beside KV (LFM2)
		layout = "per-layer"
	}
	return map[string]any{
		"prompt_token_batch_size": cfg.Export.MediaTek.PromptTokens, "cache_size": req.Window,
		"hidden_size": a.Dim, "num_head": a.Heads, "num_layer": a.Layers, "head_dim": a.HeadDim,
		"max_token_length": a.MaxPositions, "rot_emb_base": ropeBase, "vocab_size": a.Vocab,
		"input_type": "fp32", "output_type": "fp32", "cache_type": "fp32", "mask_type": "fp32", "rot_emb_type": "fp32",
		"bos_token": bosToken, "eos_token": eosToken, "eos_tokens": eos,
		"tokenizer_type": "hf", "state_layout": layout,
	}
}

// mtkFields is the report's recipe block of a MediaTek export.
func mtkFields(cfg *config.Config, req recipe.Request, plan *family.MTKPlan, prep *recipe.Prepare, chipName string, runner map[string]any) map[string]any {
	mt := cfg.Export.MediaTek
	prec := mt.Precision
	script := "examples/mediatek, " + plan.Script
	if prep.Overlay != "" {
		script = "examples/mediatek with exe-expo's " + prep.Overlay + " overlay, " + plan.Script
	}
	f := map[string]any{
		"script": plan.Script, "precision": prec, "num_chunks": plan.Chunks, "prompt_tokens": mt.PromptTokens,
		"cache_size": req.Window, "streaming_calibration": plan.Streaming, "runner": runner,
		"calibration": map[string]any{"prompts": mt.Calibration, "preformatter": plan.Preformatter},
		"label":       fmt.Sprintf("NeuroPilot %s, %d chunks", prec, plan.Chunks),
		"description": fmt.Sprintf("ExecuTorch %s MediaTek LLM export (%s): %s calibrated on MediaTek's %s prompts in the %s chat template, cut into %d chunks, with a %d-token prompt graph and a one-token generation graph over a %d-token cache, compiled with MediaTek NeuroPilot Express SDK %s (mtk_converter %s, mtk_neuron %s) for %s (%s).",
			cfg.Versions.ExecuTorch, script, prec, filepath.Base(mt.Calibration), plan.Preformatter, plan.Chunks, mt.PromptTokens, req.Window,
			cfg.Versions.NeuroPilotSDKBuild, cfg.Versions.MTKConverter, cfg.Versions.MTKNeuron, req.SoC, chipName),
	}
	if prep.Overlay != "" {
		f["overlay"] = mtkoverlay.Files(prep.Overlay)
	}
	return f
}

func mtkPrepare(req recipe.Request, family, script, weights string) *recipe.Prepare {
	p := &recipe.Prepare{
		Examples: filepath.Join(req.ExecuTorch, "examples", "mediatek"),
		Copy:     filepath.Join(req.Work, "executorch", "examples", "mediatek"),
		Source:   req.SourceDir,
		Weights:  weights,
	}
	if !mtkoverlay.Stock(script) {
		p.Overlay = family
	}
	return p
}

// weightsConfig is the config.json the MediaTek scripts read: the normalized source config
// (LFM2's layer_types made explicit) plus the tokenizer the llama path expects.
func weightsConfig(c *model.Config, plan *family.MTKPlan) ([]byte, error) {
	out := make(map[string]any, len(c.Top)+1)
	for k, v := range c.Top {
		out[k] = v
	}
	if plan.Tokenizer != "" {
		out["tokenizer"] = plan.Tokenizer
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode MediaTek weights config: %w", err)
	}
	return append(b, '\n'), nil
}
