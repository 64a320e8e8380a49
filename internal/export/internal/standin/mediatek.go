package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

func mediatek(mode string, args []string) error {
	if err := behave(mode); err != nil {
		return err
	}
	cfgPath := args[1]
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	var cfg struct {
		Vocab int64 `json:"vocab_size"`
		Dim   int64 `json:"hidden_size"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	n, _ := strconv.Atoi(flag(args, "--num_chunks"))
	prec := flag(args, "--precision")
	shape := flag(args, "-shapes") // "<p>t<w>c"
	var p, w int
	fmt.Sscanf(shape, "%dt%dc", &p, &w)
	weights := filepath.Base(filepath.Dir(cfgPath))
	exp := fmt.Sprintf("%s_%s_%d_chunks", weights, prec, n)
	dir := filepath.Join("pte", exp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		spec, err := ptetest.MediaTekChunk{Exp: exp, PromptTokens: p, Window: w, Chunk: i}.Spec()
		if err != nil {
			return err
		}
		if err := ptetest.WriteFile(filepath.Join(dir, fmt.Sprintf("%s_%d.pte", exp, i)), spec); err != nil {
			return err
		}
	}
	emb, err := os.Create(filepath.Join(filepath.Dir(cfgPath), "embedding_"+weights+"_fp32.bin"))
	if err != nil {
		return err
	}
	defer emb.Close()
	fmt.Println("NeuroPilot lowering done")
	return emb.Truncate(cfg.Vocab * cfg.Dim * 4)
}
