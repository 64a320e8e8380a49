// Command standin plays the ExecuTorch toolchain in tests: invoked as the export's python,
// it answers the checkpoint converter, export_llm, Qualcomm's llama.py and MediaTek's
// export scripts by writing genuine .pte files (pkg/pte/ptetest) where the real tools
// would. It is a test fixture only: nothing in the product runs it.
//
// Its behaviour comes from the name it is invoked under (a symlink): python-ok,
// python-fail, python-sleep, python-hog-<MiB>, python-badmeta, python-oldet, python-noet,
// and for the QNN launcher python-norecord (writes no record of what it read),
// python-stray (records a checkpoint read from outside the download) and python-wrongsha
// (records another digest of the calibration file it loaded), and for Qualcomm's llama.py
// python-noqdq (saves no QDQ program). It also answers gate_probe.py's fidelity part, which
// the QNN export's simulated measure runs.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/experimentalmachines/exe-expo/internal/pinned"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
)

func main() {
	mode := strings.TrimPrefix(filepath.Base(os.Args[0]), "python-")
	args := os.Args[1:]
	var err error
	switch {
	case len(args) >= 1 && args[0] == "-c":
		err = versions(mode, args[2:])
	case len(args) >= 1 && strings.HasSuffix(args[0], "convert.py"):
		err = convert()
	case len(args) >= 2 && args[0] == "-m" && args[1] == "executorch.extension.llm.export.export_llm",
		len(args) >= 1 && strings.HasSuffix(args[0], "export_with_codes.py"):
		err = exportLLM(mode, args)
	case len(args) >= 1 && strings.HasSuffix(args[0], "qnn_launch.py"):
		err = qnnLaunch(mode, args[1:])
	case len(args) >= 1 && strings.HasPrefix(args[0], "model_export_scripts/"):
		err = mediatek(mode, args)
	case len(args) >= 1 && strings.HasSuffix(args[0], "gate_probe.py"):
		err = gateProbe()
	default:
		err = fmt.Errorf("standin: unknown invocation %q", args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// versions answers the export's toolchain probe with the releases config/versions.env pins
// (python-oldet claims ExecuTorch 1.3.1, python-noet has none), as the locked environment
// would; transformers is the MediaTek tool venv's (python/mtk.in).
func versions(mode string, dists []string) error {
	v := pinned.Versions()
	have := map[string]string{"executorch": v.ExecuTorch, "torch": v.Torch, "torchao": v.TorchAO, "transformers": "4.57.6", "mtk_converter": v.MTKConverter + "+public", "mtk-neuron": v.MTKNeuron}
	switch mode {
	case "oldet":
		have["executorch"] = "1.3.1"
	case "noet":
		delete(have, "executorch")
	}
	out := map[string]any{}
	for _, d := range dists {
		if v, ok := have[d]; ok {
			out[d] = v
		} else {
			out[d] = nil
		}
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}

// convert answers convert.py: it reads the plan from stdin, writes a checkpoint file and
// prints the driver's JSON result.
func convert() error {
	var plan struct {
		Output        string         `json:"output"`
		Tensors       map[string]any `json:"tensors"`
		ExpectTensors int            `json:"expect_tensors"`
		Tie           any            `json:"tie"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&plan); err != nil {
		return err
	}
	if err := os.WriteFile(plan.Output, []byte("standin checkpoint\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "converted", len(plan.Tensors), "tensors")
	out, _ := json.Marshal(map[string]any{"tensors": plan.ExpectTensors, "tied_embeddings": plan.Tie != nil, "dtypes": map[string]int{"bfloat16": plan.ExpectTensors}})
	fmt.Println(string(out))
	return nil
}

func behave(mode string) error {
	fmt.Println("Checkpoint dtype: torch.bfloat16")
	switch {
	case mode == "fail":
		fmt.Println("Traceback (most recent call last):")
		fmt.Println("RuntimeError: standin failed on purpose")
		os.Exit(3)
	case mode == "sleep":
		time.Sleep(time.Hour)
	case strings.HasPrefix(mode, "hog-"):
		mib, _ := strconv.Atoi(strings.TrimPrefix(mode, "hog-"))
		buf := make([]byte, mib<<20)
		for i := 0; i < len(buf); i += 4096 {
			buf[i] = 1
		}
		time.Sleep(1500 * time.Millisecond)
		_ = buf[len(buf)-1]
	}
	return nil
}

func flag(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

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
	backend := "xnnpack"
	if c.Backend.Vulkan != nil {
		backend = "vulkan"
	}
	weights, err := weightsSize()
	if err != nil {
		return err
	}
	var kv []ptetest.Planned
	if backend == "xnnpack" { // Vulkan's delegate keeps the cache on the GPU, out of the plan
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

// gateProbe answers drivers/gate_probe.py's fidelity part, as the export's simulated
// measure asks it (no gate rows): the reference reads the plan's first tokens (ids 1, 2,
// ...) and gives every position the same distribution, half its mass on the top_k ids 0,
// 1, ... and half on the rest; the measure gives the QDQ program's the same, except that
// every fourth position's argmax is another token, so agreement is 75% and KL 0.
func gateProbe() error {
	var plan struct {
		Mode     string `json:"mode"`
		Fidelity struct {
			Tokens   int     `json:"tokens"`
			TopK     int     `json:"top_k"`
			TokenIDs []int   `json:"token_ids"`
			Buckets  [][]int `json:"buckets"`
		} `json:"fidelity"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&plan); err != nil {
		return err
	}
	f := plan.Fidelity
	type pos struct {
		IDs   []int     `json:"ids,omitempty"`
		Token *int      `json:"token,omitempty"`
		LogP  []float64 `json:"logp"`
		Rest  float64   `json:"rest"`
	}
	logp := func(k int) []float64 {
		l := make([]float64, k)
		for i := range l {
			l[i] = math.Log(0.5 / float64(k))
		}
		return l
	}
	var out map[string]any
	switch plan.Mode {
	case "reference":
		tokens, positions := make([]int, f.Tokens), make([]pos, f.Tokens)
		for i := range tokens {
			tokens[i] = i + 1
			positions[i] = pos{IDs: make([]int, f.TopK), LogP: logp(f.TopK), Rest: 0.5}
			for j := range positions[i].IDs {
				positions[i].IDs[j] = j
			}
		}
		out = map[string]any{"rows": map[string]any{}, "fidelity": map[string]any{"top_k": f.TopK, "tokens": tokens, "positions": positions}}
	case "measure":
		positions := make([]pos, len(f.TokenIDs))
		for i := range positions {
			tok := f.Buckets[i][0]
			if i%4 == 3 {
				tok = 1000
			}
			positions[i] = pos{Token: &tok, LogP: logp(len(f.Buckets[i])), Rest: 0.5}
		}
		out = map[string]any{"rows": map[string]any{}, "fidelity": map[string]any{"positions": positions}}
	default:
		return fmt.Errorf("standin: gate_probe.py mode %q", plan.Mode)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
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
