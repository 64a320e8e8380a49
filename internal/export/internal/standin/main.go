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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/pinned"
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
