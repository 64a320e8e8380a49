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
// CUDA libraries, gigabytes an export on a CPU runner never loads, so torch comes from here
// first and the pinned install after it finds it satisfied (2.13.0+cpu is 2.13.0).
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

// pins are the requirements every environment gets: ExecuTorch and the torch and torchao
// its install_requirements.py installs.
func pins(c Config) []string {
	v := c.Versions
	return []string{"executorch==" + v.ExecuTorch, "torch==" + v.Torch, "torchao==" + v.TorchAO}
}

// extras are the backend's distributions beyond the pins: its Dists and Requires, once
// each, without the ones its SDK brings as wheels (Tools.Pins).
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
	// ToolBase is the MTK_PYTHON_VERSION interpreter the tool venv is made from, and
	// ToolVenv the venv's folder; both empty unless the backend's tool runs there.
	ToolBase, ToolVenv string
	// Wheels are the SDK's wheels the tool venv installs.
	Wheels []string
}

// ToolPython is the venv's python.
func (p Python) ToolPython() string {
	if p.ToolVenv == "" {
		return ""
	}
	return filepath.Join(p.ToolVenv, "bin", "python")
}

// Requirements are what each interpreter gets: the main python the pins (and the
// backend's distributions, unless its tool runs in its own venv); the tool venv the pins
// and the distributions, its SDK's wheels aside.
func Requirements(c Config) (main, tool []string) {
	main = pins(c)
	if !c.Tools.MTKPython {
		return append(main, extras(c)...), nil
	}
	return main, append(pins(c), extras(c)...)
}

// Installs are the commands that install the pinned environment, in order, torch from
// the CPU index before each interpreter's requirements.
func Installs(c Config, p Python) []Cmd {
	main, tool := Requirements(c)
	torch := []string{"--index-url", TorchIndex, "torch==" + c.Versions.Torch}
	cmds := []Cmd{pip(p.Main, torch...), pip(p.Main, main...)}
	if !c.Tools.MTKPython {
		return cmds
	}
	venv := p.ToolPython()
	return append(cmds,
		Cmd{Argv: []string{p.ToolBase, "-m", "venv", p.ToolVenv}},
		pip(venv, torch...),
		pip(venv, append(tool, p.Wheels...)...))
}

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
