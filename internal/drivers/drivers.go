// Package drivers holds the few Python programs exe-expo cannot avoid (checkpoint
// conversion and the GPTQ solve need torch) and the Go side that plans and runs them.
//
// Every decision stays in Go: a plan type here says exactly what a driver does (which
// tensor goes where, which heads to un-permute, which grid to solve on), the driver reads
// it as JSON and prints a JSON result. The scripts are embedded so the binary is the only
// thing a runner needs besides a python with torch.
package drivers

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Script names, as embedded and as written to disk.
const (
	ConvertScript = "convert.py"
	GPTQScript    = "gptq.py"
	// ExportWithCodesScript runs export_llm with GPTQ codes injected and, for LFM2, the
	// short-convolution state reset; the recipe runs it in place of export_llm.
	ExportWithCodesScript = "export_with_codes.py"
	// QNNLaunchScript runs ExecuTorch's Qualcomm LLM script on the downloaded snapshot and
	// records what it read; the QNN recipe runs it in place of llama.py.
	QNNLaunchScript = "qnn_launch.py"
	// OptimumExportScript exports Gemma 3 and SmolLM3 with optimum-executorch, the route of
	// the families export_llm cannot build (family.RouteOptimum).
	OptimumExportScript = "optimum_export.py"
	// driverIO is the JSON frame the drivers share; it is written beside them.
	driverIO = "driver_io.py"
)

// qnnLaunchParts are the modules QNNLaunchScript imports, one idea each, written beside it.
var qnnLaunchParts = []string{"qnn_script.py", "qnn_torchtune.py", "qnn_record.py", "qnn_encodings.py", "qnn_calibfile.py", "qnn_calibrate.py"}

//go:embed convert.py gptq.py export_with_codes.py solve_model.py qnn_launch.py optimum_export.py gate_probe.py smoke_run.py speed_run.py calib_rows.py driver_io.py
//go:embed qnn_script.py qnn_torchtune.py qnn_record.py qnn_encodings.py qnn_calibfile.py qnn_calibrate.py
var scripts embed.FS

// Names lists the embedded drivers and the modules they import, so tests and tools can
// check every one of them and WriteScripts writes them all.
func Names() []string {
	return append([]string{ConvertScript, GPTQScript, ExportWithCodesScript, SolveModelScript, QNNLaunchScript, OptimumExportScript, GateProbeScript, SmokeRunScript, SpeedRunScript, CalibRowsScript, driverIO},
		qnnLaunchParts...)
}

// Source returns the text of one embedded driver.
func Source(name string) ([]byte, error) {
	b, err := fs.ReadFile(scripts, name)
	if err != nil {
		return nil, fmt.Errorf("driver %s: %w", name, err)
	}
	return b, nil
}

// WriteScripts writes every driver into dir (created if needed) and returns their paths in
// Names order. A workflow step can then run them with the toolchain's python.
func WriteScripts(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create driver folder %s: %w", dir, err)
	}
	var paths []string
	for _, name := range Names() {
		b, err := Source(name)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, fmt.Errorf("write driver %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
