package qnn

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
)

// Prompt is the prompt the Qualcomm script needs even with --compile_only.
const Prompt = "What is the capital of France?"

// The QNN launcher's files in the work folder: its record of what the Qualcomm script read,
// and the checkpoint the script's own converter writes from the downloaded snapshot (which
// the script would otherwise cache under ~/.cache by repo id, whatever the revision).
const (
	InputsFile     = "qnn-inputs.json"
	CheckpointFile = "qnn-checkpoint.pth"
	// QDQFile is the quantized program llama.py saves in its artifact folder before
	// lowering (decoder_constants.DECODE_QDQ_FILENAME): export measures it on the CPU for
	// the simulated quality figure.
	QDQFile = "decode_qdq.pt2"
)

// Build is the recipe builder of Qualcomm QNN exports.
func Build(cfg *config.Config, req recipe.Request) (*recipe.Recipe, error) {
	q := cfg.Export.QNN
	src := req.Source
	chip, ok := cfg.Chips[req.SoC]
	if !ok || chip.Backend != req.Backend {
		return nil, fmt.Errorf("unknown Qualcomm chip %q (configured: %s)", req.SoC, strings.Join(q.SoCs, ", "))
	}
	if req.Window < q.PrefillARLen {
		return nil, fmt.Errorf("window %d is below the prefill length %d of the hybrid graphs", req.Window, q.PrefillARLen)
	}
	decoder, ok := family.QNNDecoders[src.ID]
	if !ok {
		return nil, fmt.Errorf("%s cannot be exported to qnn: no entry for this checkpoint in ExecuTorch %s's Qualcomm LLM scripts", src.ID, cfg.Versions.ExecuTorch)
	}
	label := family.WindowLabel(req.Window)
	folder := "qnn/" + strings.ToLower(req.SoC)
	name := fmt.Sprintf("%s-qnn-%s-%s.pte", src.Name(), q.ModelMode, label)
	w := strconv.Itoa(req.Window)
	meta := family.QNNMetaCheckpoint[decoder]
	argv := []string{req.Python, filepath.Join(req.Work, "drivers", "qnn_launch.py"), "--record", filepath.Join(req.Work, InputsFile)}
	if !meta { // the script loads these by Hub id: the launcher serves them from the download
		argv = append(argv, "--repo", src.ID, "--snapshot", req.SourceDir, "--checkpoint", filepath.Join(req.Work, CheckpointFile))
	}
	calibration := map[string]any{"tasks": q.CalibTasks, "limit": q.CalibLimit, "window": req.Window}
	calibratedAt := ""
	var outputs []recipe.Output
	at, qdq := Calibration(cfg, decoder).At, ""
	switch {
	case req.Calibration != "" && req.CalibrationOut != "":
		return nil, fmt.Errorf("the Qualcomm recipe either calibrates only (writing %s) or builds from a calibration file (%s), not both", req.CalibrationOut, req.Calibration)
	case req.CalibrationOut != "": // the one calibration of this model and chip: no program
		argv = append(argv, "--save-calibration", req.CalibrationOut, "--calibrate-only")
		calibration["file"] = filepath.Base(req.CalibrationOut)
		label = "calibration-" + label
	case req.Calibration != "": // the window's encodings come from the file; the record gives its digest
		argv = append(argv, "--load-calibration", req.Calibration)
		delete(calibration, "window")
		calibration["file"] = filepath.Base(req.Calibration)
		calibratedAt = fmt.Sprintf(" (encodings loaded from %s)", filepath.Base(req.Calibration))
	case at > 0 && req.Window > at: // the SeqMSE search grows with the window
		argv = append(argv, "--calib-window", strconv.Itoa(at))
		calibration["window"] = at
		calibratedAt = fmt.Sprintf(" at %d tokens", at)
	}
	if req.CalibrationOut == "" { // a calibrate-only run saves no program to measure
		qdq = filepath.Join(req.Work, "artifact", QDQFile)
		outputs = []recipe.Output{{From: filepath.Join(req.Work, "artifact", "*"+q.ModelMode+"_llama_qnn.pte"), To: path.Join(folder, name), Kind: "pte",
			Expect: &check.Expect{MaxContextLen: int64(req.Window), QNNMode: q.ModelMode}}}
	}
	argv = append(argv, "--", "--decoder_model", decoder, "--soc_model", req.SoC, "--compile_only",
		"--model_mode", q.ModelMode, "--max_seq_len", w, "--max_context_len", w,
		"--prefill_ar_len", strconv.Itoa(q.PrefillARLen),
		"--calib_limit", strconv.Itoa(q.CalibLimit), "--artifact", filepath.Join(req.Work, "artifact"), "--build_folder", filepath.Join(req.Work, "build-android"),
		"--prompt", Prompt, "--temperature", "0", "--calib_tasks")
	argv = append(argv, q.CalibTasks...)
	var params string
	if meta {
		orig := filepath.Join(req.SourceDir, "original")
		argv = append(argv, "--checkpoint", filepath.Join(orig, "consolidated.00.pth"), "--params", filepath.Join(orig, "params.json"),
			"--tokenizer_model", filepath.Join(orig, "tokenizer.model"))
		params = src.Name() + ": original/params.json"
	} else {
		rel := family.QNNParams[decoder]
		if req.ExecuTorch == "" {
			return nil, fmt.Errorf("the Qualcomm recipe for %s needs the ExecuTorch source tree (Request.ExecuTorch) for %s", decoder, rel)
		}
		argv = append(argv, "--params", filepath.Join(req.ExecuTorch, rel))
		params = "executorch: " + rel
	}
	methods := map[string]string{"hybrid": "kv_forward and prefill_forward", "kv": "kv_forward"}[q.ModelMode]
	description := fmt.Sprintf("ExecuTorch %s Qualcomm LLM script (%s): %s mode with %s, %d-token prefill graph over a %d-token cache, calibrated on %s (limit %d)%s, compiled with QAIRT %s for %s (%s).",
		cfg.Versions.ExecuTorch, decoder, q.ModelMode, methods, q.PrefillARLen, req.Window, strings.Join(q.CalibTasks, ", "), q.CalibLimit, calibratedAt, cfg.Versions.QAIRT, req.SoC, chip.Name)
	if req.CalibrationOut != "" {
		description = fmt.Sprintf("ExecuTorch %s Qualcomm LLM script (%s): calibration only, a %d-token graph calibrated on %s (limit %d) for %s (%s), its encodings saved to %s for every window of this model and chip; no program built.",
			cfg.Versions.ExecuTorch, decoder, req.Window, strings.Join(q.CalibTasks, ", "), q.CalibLimit, req.SoC, chip.Name, filepath.Base(req.CalibrationOut))
	}
	return &recipe.Recipe{
		Backend: req.Backend, Target: req.SoC, TargetName: chip.Name, Window: req.Window, Label: label, Folder: folder,
		Files: map[string][]byte{}, Inputs: filepath.Join(req.Work, InputsFile), QDQ: qdq,
		Steps:   []recipe.Step{{Name: "qnn_llama", Argv: argv, Dir: req.Work, Stages: req.Backend, Env: map[string]string{"PYTHONUNBUFFERED": "1"}}},
		Outputs: outputs,
		Fields: map[string]any{
			"decoder_model": decoder, "params": params, "model_mode": q.ModelMode,
			"prefill_ar_len": q.PrefillARLen, "max_context_len": req.Window,
			"calibration": calibration,
			"label":       fmt.Sprintf("QNN HTP, ExecuTorch %s recipe", decoder),
			"description": description,
		},
	}, nil
}
