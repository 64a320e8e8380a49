package setup

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	exeexpo "github.com/experimentalmachines/exe-expo"
)

// The lock files (python/lock.sh): every distribution of the export environment pinned
// exactly, for PYTHON_VERSION and for MTK_PYTHON_VERSION (the MediaTek tool venv).
const (
	LockFile     = "python/export.lock"
	ToolLockFile = "python/mtk-py310.lock"
	// OverlayLockFile pins the transformers overlay by hash (python/install.sh installs it
	// beside the locked environment).
	OverlayLockFile = "python/overlay.lock"
)

// Pin is one locked distribution.
type Pin struct{ Dist, Version string }

// Lock is a lock file's pins, in file order.
type Lock struct {
	Name string
	Pins []Pin
}

// LoadLock reads an embedded lock file.
func LoadLock(name string) (Lock, error) {
	b, err := exeexpo.PythonFS.ReadFile(name)
	if err != nil {
		return Lock{}, fmt.Errorf("embedded lock file: %w", err)
	}
	return ParseLock(name, b)
}

// LockFor is the lock of the interpreter version ("3.11" or "3.10").
func LockFor(python string) (Lock, error) {
	switch python {
	case "3.11":
		return LoadLock(LockFile)
	case "3.10":
		return LoadLock(ToolLockFile)
	}
	return Lock{}, fmt.Errorf("no lock file for python %s: python/lock.sh locks 3.11 and 3.10", python)
}

// ParseLock reads requirement lines "dist==version" (uv's and pip-compile's output);
// comments and blank lines are skipped, and anything else is an error, so a lock never
// carries an unpinned or URL requirement.
func ParseLock(name string, b []byte) (Lock, error) {
	l := Lock{Name: path.Base(name)}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		dist, version, ok := strings.Cut(line, "==")
		if !ok || !validDist(dist) || version == "" || strings.ContainsAny(version, " ;@<>=!~") {
			return Lock{}, fmt.Errorf("%s:%d: %q is not an exact pin (dist==version)", name, n, line)
		}
		l.Pins = append(l.Pins, Pin{Dist: dist, Version: version})
	}
	if len(l.Pins) == 0 {
		return Lock{}, fmt.Errorf("%s pins nothing", name)
	}
	return l, sc.Err()
}

func validDist(d string) bool {
	if d == "" {
		return false
	}
	for _, r := range d {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Version is the version the lock pins dist at (names compared as PEP 503 does).
func (l Lock) Version(dist string) (string, bool) {
	n := normalize(dist)
	for _, p := range l.Pins {
		if normalize(p.Dist) == n {
			return p.Version, true
		}
	}
	return "", false
}

// CPU is the lock without the CUDA libraries PyPI's torch wheel pulls in (nvidia-*, cuda-*,
// triton): torch from PyTorch's CPU index, same version, needs none of them.
func (l Lock) CPU() Lock {
	out := Lock{Name: l.Name}
	for _, p := range l.Pins {
		if !cudaOnly(p.Dist) {
			out.Pins = append(out.Pins, p)
		}
	}
	return out
}

func cudaOnly(dist string) bool {
	n := normalize(dist)
	return strings.HasPrefix(n, "nvidia-") || strings.HasPrefix(n, "cuda-") || n == "triton"
}

// Requirements is the lock as pip's requirements file.
func (l Lock) Requirements() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s for torch from the CPU index (exe-expo setup-export)\n", l.Name)
	for _, p := range l.Pins {
		fmt.Fprintf(&b, "%s==%s\n", p.Dist, p.Version)
	}
	return b.Bytes()
}

// checkPins says where the lock and versions.env disagree: ExecuTorch, torch and torchao
// must be at versions.env's pins.
func checkPins(l Lock, c Config) error {
	v := c.Versions
	for _, want := range []Pin{{"executorch", v.ExecuTorch}, {"torch", v.Torch}, {"torchao", v.TorchAO}} {
		got, ok := l.Version(want.Dist)
		if !ok || got != want.Version {
			return fmt.Errorf("%s pins %s %q, and config/versions.env says %s: run python/lock.sh after changing versions.env", l.Name, want.Dist, got, want.Version)
		}
	}
	return nil
}
