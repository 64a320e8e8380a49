package setup

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// TorchIndex is PyTorch's CPU-only wheel index. torch from PyPI on x86-64 Linux pulls the
// CUDA libraries, gigabytes an export on a CPU runner never loads, so on a runner torch
// comes from here first and the locked install after it finds it satisfied (2.14.0+cpu is
// 2.14.0). CI, which reaches PyPI alone, installs the whole lock (python/install.sh).
const TorchIndex = "https://download.pytorch.org/whl/cpu"

// PythonVersions are the interpreters setup-python must provide, the default one last (as
// setup-python puts the last one first on PATH): the tool venv's for a backend whose tool
// runs there, then PYTHON_VERSION.
func PythonVersions(c Config) []string {
	if c.Tools.MTKPython {
		return []string{c.Versions.MTKPython, c.Versions.Python}
	}
	return []string{c.Versions.Python}
}

// extras are the backend's distributions beyond ExecuTorch's own: its Dists and Requires,
// once each, without the ones its SDK brings as wheels (Tools.Pins). The lock must pin
// every one of them (TestLockCoversBackends).
func extras(c Config) []string {
	fromSDK := map[string]bool{}
	for d := range sdkPins(c) {
		fromSDK[normalize(d)] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range append(slices.Clone(c.Tools.Dists), c.Tools.Requires...) {
		n := normalize(d)
		if fromSDK[n] || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, d)
	}
	return out
}

func sdkPins(c Config) map[string]string {
	if c.Tools.Pins == nil {
		return nil
	}
	return c.Tools.Pins(c.Versions)
}

var nonName = regexp.MustCompile(`[-_.]+`)

// normalize is a distribution's name as PEP 503 compares them.
func normalize(dist string) string { return nonName.ReplaceAllString(strings.ToLower(dist), "-") }

// Python is where the environment goes.
type Python struct {
	// Main is the PYTHON_VERSION interpreter the export's drivers run with.
	Main string
	// Lock is the requirements file installed into Main: python/export.lock without the
	// CUDA libraries (Lock.CPU), written by setup-export.
	Lock string
	// ToolBase is the MTK_PYTHON_VERSION interpreter the tool venv is made from, ToolVenv
	// the venv's folder and ToolLock its requirements file (python/mtk-py310.lock
	// likewise); all empty unless the backend's tool runs there.
	ToolBase, ToolVenv, ToolLock string
	// Wheels are the SDK's wheels the tool venv installs.
	Wheels []string
	// Overlay is the folder the transformers overlay goes into (python/overlay.lock,
	// written to OverlayLock): the drivers put it first on the path for the families the
	// locked transformers has no class for (Qwen3.5), and find it by OverlayEnv.
	Overlay, OverlayLock string
}

// OverlayEnv names the transformers overlay's folder to the drivers (driver_io.py's
// transformers_for); without it they look in the interpreter's prefix, where
// python/install.sh puts it.
const OverlayEnv = "EXE_EXPO_TRANSFORMERS_OVERLAY"

// ToolPython is the venv's python.
func (p Python) ToolPython() string {
	if p.ToolVenv == "" {
		return ""
	}
	return filepath.Join(p.ToolVenv, "bin", "python")
}

// Requirements are what the step summary says each interpreter got: ExecuTorch's three
// pins and the lock file the rest came from.
func Requirements(c Config) (main, tool []string) {
	v := c.Versions
	pins := []string{"executorch==" + v.ExecuTorch, "torch==" + v.Torch + " (CPU build)", "torchao==" + v.TorchAO}
	main = append(slices.Clone(pins), "every other distribution as "+LockFile+" pins it",
		"the transformers overlay as "+OverlayLockFile+" pins it")
	if !c.Tools.MTKPython {
		return main, nil
	}
	return main, append(slices.Clone(pins), "every other distribution as "+ToolLockFile+" pins it")
}

// Installs are the commands that install the locked environment, in order: torch from the
// CPU index, then the lock, both without dependencies, so that nothing unpinned comes in
// (torch 2.14.0+cpu satisfies the lock's torch==2.14.0, and the CUDA libraries are left
// out of the file); then the transformers overlay, hash-pinned, into its own folder, and its
// mark of a finished install (a folder without it is refused by the drivers); the tool
// venv likewise, then the SDK's wheels.
func Installs(c Config, p Python) []Cmd {
	torch := []string{"--no-deps", "--index-url", TorchIndex, "torch==" + c.Versions.Torch}
	cmds := []Cmd{pip(p.Main, torch...), pip(p.Main, "--no-deps", "-r", p.Lock)}
	if p.Overlay != "" {
		cmds = append(cmds, pip(p.Main, "--no-deps", "--require-hashes", "--target", p.Overlay, "-r", p.OverlayLock),
			Cmd{Argv: []string{p.Main, "-c", markComplete, filepath.Join(p.Overlay, ".complete"), OverlayLockFile}})
	}
	if !c.Tools.MTKPython {
		return cmds
	}
	venv := p.ToolPython()
	return append(cmds,
		Cmd{Argv: []string{p.ToolBase, "-m", "venv", p.ToolVenv}},
		pip(venv, torch...),
		pip(venv, "--no-deps", "-r", p.ToolLock),
		pip(venv, append([]string{"--no-deps"}, p.Wheels...)...))
}

// markComplete writes its first argument's file with the second as content: the overlay's
// mark, written only after pip has put every file in place.
const markComplete = "import sys; open(sys.argv[1], 'w').write(sys.argv[2] + '\\n')"

func pip(python string, args ...string) Cmd {
	return Cmd{Argv: append([]string{python, "-m", "pip", "install", "--progress-bar", "off"}, args...)}
}

// Wheel is one distribution the SDK brings.
type Wheel struct {
	Dist, Version string
}

// SDKWheels are the distributions the backend's tool venv takes from the SDK: the pinned
// ones (Tools.Pins), which no index serves.
func SDKWheels(c Config) []Wheel {
	var out []Wheel
	for d, v := range sdkPins(c) {
		out = append(out, Wheel{Dist: d, Version: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dist < out[j].Dist })
	return out
}

// matches says whether a wheel file is this distribution at this version for python
// (major.minor): "mtk_converter-8.13.0+public-cp310-cp310-manylinux….whl" for 8.13.0 and
// 3.10, or a py3 wheel.
func (w Wheel) matches(file, python string) bool {
	prefix := strings.ReplaceAll(normalize(w.Dist), "-", "_") + "-" + w.Version
	rest, ok := strings.CutPrefix(file, prefix)
	if !ok || !strings.HasSuffix(file, ".whl") || rest == "" || (rest[0] != '-' && rest[0] != '+') {
		return false
	}
	cp := "-cp" + strings.ReplaceAll(python, ".", "") + "-"
	return strings.Contains(file, cp) || strings.Contains(file, "-py3-")
}

func (w Wheel) String() string { return fmt.Sprintf("%s %s", w.Dist, w.Version) }
