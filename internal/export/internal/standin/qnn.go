package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

func qnn(mode string, args []string) error {
	if err := behave(mode); err != nil {
		return err
	}
	w, _ := strconv.ParseInt(flag(args, "--max_context_len"), 10, 64)
	ar, _ := strconv.ParseInt(flag(args, "--prefill_ar_len"), 10, 64)
	dir := flag(args, "--artifact")
	m := flag(args, "--model_mode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	spec, err := ptetest.QNN{Mode: m, Metadata: ptetest.QNNMetadata(w, ar)}.Spec()
	if err != nil {
		return err
	}
	if mode != "noqdq" { // llama.py saves the QDQ program before lowering
		if err := os.WriteFile(filepath.Join(dir, "decode_qdq.pt2"), []byte("standin QDQ program"), 0o644); err != nil {
			return err
		}
	}
	fmt.Println("QNN compile done")
	return ptetest.WriteFile(filepath.Join(dir, m+"_llama_qnn.pte"), spec)
}

// qnnLaunch answers drivers/qnn_launch.py: it runs the stand-in llama.py on the arguments
// after "--" and writes the launcher's record of what the script read, as the launcher
// would: the snapshot it served, the files the flags name, and wikitext's calibration rows.
func qnnLaunch(mode string, args []string) error {
	cut := len(args)
	for i, a := range args {
		if a == "--" {
			cut = i
			break
		}
	}
	own, script := args[:cut], args[min(cut+1, len(args)):]
	rec := map[string]any{"repo": nil}
	if out := flag(own, "--save-calibration"); out != "" { // the launcher's file, as bytes the export hashes
		if err := os.WriteFile(out, []byte("encodings of "+flag(script, "--soc_model")), 0o644); err != nil {
			return err
		}
	}
	if in := flag(own, "--load-calibration"); in != "" {
		b, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if mode == "wrongsha" {
			sum = sha256.Sum256(append(b, '!'))
		}
		rec["calibration_file"] = map[string]any{"path": in, "sha256": hex.EncodeToString(sum[:]), "window": 2048,
			"executorch": pinned.Version(), "kept_constants": []string{"_frozen_param21 4096x8 (the file's 2048x8)"}}
	}
	if !slices.Contains(own, "--calibrate-only") {
		if err := qnn(mode, script); err != nil {
			return err
		}
	}
	if mode == "norecord" {
		return nil
	}
	type read struct {
		What string `json:"what"`
		Path string `json:"path"`
	}
	var reads []read
	if repo := flag(own, "--repo"); repo != "" {
		rec["repo"] = repo
		snap := flag(own, "--snapshot")
		if mode == "stray" {
			snap = os.TempDir()
		}
		reads = append(reads, read{"tokenizer", snap}, read{"checkpoint", snap}, read{"checkpoint", snap})
	}
	for f, what := range map[string]string{"--checkpoint": "checkpoint", "--params": "params", "--tokenizer_model": "tokenizer"} {
		if p := flag(script, f); p != "" {
			reads = append(reads, read{what, p})
		}
	}
	rec["read"] = reads
	limit, _ := strconv.Atoi(flag(script, "--calib_limit"))
	rec["calibration"] = map[string]any{
		"tasks": []string{flag(script, "--calib_tasks")}, "limit": limit, "num_fewshot": nil,
		"sequences": 2, "tokens": 4096, "tokens_sha256": strings.Repeat("ab", 32),
		"datasets": []any{map[string]any{"path": "EleutherAI/wikitext_document_level", "name": "wikitext-2-raw-v1",
			"revision": nil, "splits": map[string]any{"test": map[string]any{"rows": 62, "fingerprint": "f00d"}}}},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(flag(own, "--record"), b, 0o644)
}
