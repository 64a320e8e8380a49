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
	folder := "qnn/" + strings.ToLower(req.SoC)
	name := fmt.Sprintf("%s-qnn-%s-%s.pte", src.Name(), q.ModelMode, family.WindowLabel(req.Window))
	meta := family.QNNMetaCheckpoint[decoder]
	argv := []string{req.Python, filepath.Join(req.Work, "drivers", "qnn_launch.py"), "--record", filepath.Join(req.Work, InputsFile)}
	if !meta { // the script loads these by Hub id: the launcher serves them from the download
		argv = append(argv, "--repo", src.ID, "--snapshot", req.SourceDir, "--checkpoint", filepath.Join(req.Work, CheckpointFile))
	}
	cal, err := calibrationOf(cfg, req, decoder)
	if err != nil {
		return nil, err
	}
	argv = append(append(argv, cal.argv...), scriptArgs(q, req, decoder)...)
	files, params, err := modelFiles(req, decoder, meta)
	if err != nil {
		return nil, err
	}
	argv = append(argv, files...)
	var outputs []recipe.Output
	qdq := ""
	if req.CalibrationOut == "" { // a calibrate-only run saves no program to measure
		qdq = filepath.Join(req.Work, "artifact", QDQFile)
		outputs = []recipe.Output{{From: filepath.Join(req.Work, "artifact", "*"+q.ModelMode+"_llama_qnn.pte"), To: path.Join(folder, name), Kind: "pte",
			Expect: &check.Expect{MaxContextLen: int64(req.Window), QNNMode: q.ModelMode}}}
	}
	return &recipe.Recipe{
		Backend: req.Backend, Target: req.SoC, TargetName: chip.Name, Window: req.Window, Label: cal.prefix + family.WindowLabel(req.Window), Folder: folder,
		Files: map[string][]byte{}, Inputs: filepath.Join(req.Work, InputsFile), QDQ: qdq,
		Steps:   []recipe.Step{{Name: "qnn_llama", Argv: argv, Dir: req.Work, Stages: req.Backend, Env: map[string]string{"PYTHONUNBUFFERED": "1"}}},
		Outputs: outputs,
		Fields: map[string]any{
			"decoder_model": decoder, "params": params, "model_mode": q.ModelMode,
			"prefill_ar_len": q.PrefillARLen, "max_context_len": req.Window,
			"calibration": cal.fields,
			"label":       fmt.Sprintf("QNN HTP, ExecuTorch %s recipe", decoder),
			"description": describe(cfg, req, decoder, chip.Name, cal.at),
		},
	}, nil
}

// calibrationRun is how one QNN export calibrates: the launcher's flags, the recipe's
// calibration fields, what the description says of where its encodings come from, and the
// label's prefix (a calibrate-only run's files are not a window's).
type calibrationRun struct {
	argv   []string
	fields map[string]any
	at     string
	prefix string
}

// calibrationOf decides how the export calibrates: once for the model and chip (writing
// the file, no program), from that file, at the shorter calib_window (the SeqMSE search
// grows with the window), or at the window itself.
func calibrationOf(cfg *config.Config, req recipe.Request, decoder string) (calibrationRun, error) {
	q := cfg.Export.QNN
	c := calibrationRun{fields: map[string]any{"tasks": q.CalibTasks, "limit": q.CalibLimit, "window": req.Window}}
	at := Calibration(cfg, decoder).At
	switch {
	case req.Calibration != "" && req.CalibrationOut != "":
		return c, fmt.Errorf("the Qualcomm recipe either calibrates only (writing %s) or builds from a calibration file (%s), not both", req.CalibrationOut, req.Calibration)
	case req.CalibrationOut != "": // the one calibration of this model and chip: no program
		c.argv = []string{"--save-calibration", req.CalibrationOut, "--calibrate-only"}
		c.fields["file"] = filepath.Base(req.CalibrationOut)
		c.prefix = "calibration-"
	case req.Calibration != "": // the window's encodings come from the file; the record gives its digest
		c.argv = []string{"--load-calibration", req.Calibration}
		delete(c.fields, "window")
		c.fields["file"] = filepath.Base(req.Calibration)
		c.at = fmt.Sprintf(" (encodings loaded from %s)", filepath.Base(req.Calibration))
	case at > 0 && req.Window > at: // the SeqMSE search grows with the window
		c.argv = []string{"--calib-window", strconv.Itoa(at)}
		c.fields["window"] = at
		c.at = fmt.Sprintf(" at %d tokens", at)
	}
	return c, nil
}

// scriptArgs are llama.py's own arguments, after the launcher's "--", up to the model files.
func scriptArgs(q config.QNNRecipe, req recipe.Request, decoder string) []string {
	w := strconv.Itoa(req.Window)
	argv := []string{"--", "--decoder_model", decoder, "--soc_model", req.SoC, "--compile_only",
		"--model_mode", q.ModelMode, "--max_seq_len", w, "--max_context_len", w,
		"--prefill_ar_len", strconv.Itoa(q.PrefillARLen),
		"--calib_limit", strconv.Itoa(q.CalibLimit), "--artifact", filepath.Join(req.Work, "artifact"), "--build_folder", filepath.Join(req.Work, "build-android"),
		"--prompt", Prompt, "--temperature", "0", "--calib_tasks"}
	return append(argv, q.CalibTasks...)
}

// modelFiles are the script's flags naming the model's files, and where its params come
// from: Meta's original/ checkpoint for a Meta decoder, else ExecuTorch's params file for
// the decoder (its weights come through the launcher).
func modelFiles(req recipe.Request, decoder string, meta bool) ([]string, string, error) {
	if meta {
		orig := filepath.Join(req.SourceDir, "original")
		return []string{"--checkpoint", filepath.Join(orig, "consolidated.00.pth"), "--params", filepath.Join(orig, "params.json"),
			"--tokenizer_model", filepath.Join(orig, "tokenizer.model")}, req.Source.Name() + ": original/params.json", nil
	}
	rel := family.QNNParams[decoder]
	if req.ExecuTorch == "" {
		return nil, "", fmt.Errorf("the Qualcomm recipe for %s needs the ExecuTorch source tree (Request.ExecuTorch) for %s", decoder, rel)
	}
	return []string{"--params", filepath.Join(req.ExecuTorch, rel)}, "executorch: " + rel, nil
}

// describe is the recipe's description: the graphs built and how they were calibrated, or,
// for a calibrate-only run, the file it saves.
func describe(cfg *config.Config, req recipe.Request, decoder, chipName, calibratedAt string) string {
	q := cfg.Export.QNN
	if req.CalibrationOut != "" {
		return fmt.Sprintf("ExecuTorch %s Qualcomm LLM script (%s): calibration only, a %d-token graph calibrated on %s (limit %d) for %s (%s), its encodings saved to %s for every window of this model and chip; no program built.",
			cfg.Versions.ExecuTorch, decoder, req.Window, strings.Join(q.CalibTasks, ", "), q.CalibLimit, req.SoC, chipName, filepath.Base(req.CalibrationOut))
	}
	methods := map[string]string{"hybrid": "kv_forward and prefill_forward", "kv": "kv_forward"}[q.ModelMode]
	return fmt.Sprintf("ExecuTorch %s Qualcomm LLM script (%s): %s mode with %s, %d-token prefill graph over a %d-token cache, calibrated on %s (limit %d)%s, compiled with QAIRT %s for %s (%s).",
		cfg.Versions.ExecuTorch, decoder, q.ModelMode, methods, q.PrefillARLen, req.Window, strings.Join(q.CalibTasks, ", "), q.CalibLimit, calibratedAt, cfg.Versions.QAIRT, req.SoC, chipName)
}
