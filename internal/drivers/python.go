package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// DefaultPythons are tried in order by FindTorchPython: Debian's interpreter first, since
// python3-torch installs there and a pyenv shim on PATH usually has no torch.
var DefaultPythons = []string{"/usr/bin/python3", "python3", "python"}

// FindTorchPython returns the first candidate that imports torch, with torch's version.
func FindTorchPython(ctx context.Context, candidates ...string) (python, version string, err error) {
	if len(candidates) == 0 {
		candidates = DefaultPythons
	}
	var tried []string
	for _, c := range candidates {
		p, lookErr := exec.LookPath(c)
		if lookErr != nil {
			tried = append(tried, c+" (not found)")
			continue
		}
		out, runErr := exec.CommandContext(ctx, p, "-c", "import torch; print(torch.__version__)").Output()
		if runErr != nil {
			tried = append(tried, p+" (no torch)")
			continue
		}
		return p, strings.TrimSpace(string(out)), nil
	}
	return "", "", fmt.Errorf("no python with torch: tried %s", strings.Join(tried, ", "))
}

// PythonHint is what a user does about a python that cannot run a step: the export
// environment python/install.sh installs has everything the drivers and the recipes need.
const PythonHint = "point --python or EXE_EXPO_PYTHON at the export environment's python (python/install.sh installs it and prints its path)"

// Distributions a step needs of its python (the names importlib.metadata knows them by).
const (
	DistExecuTorch   = "executorch"
	DistTorch        = "torch"
	DistTransformers = "transformers"
)

// versionProbe prints the installed versions of the named distributions as JSON; a
// missing one is null. It runs in the toolchain's python, not ours.
const versionProbe = `import json, sys
from importlib import metadata
out = {}
for name in sys.argv[1:]:
    try:
        out[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        out[name] = None
print(json.dumps(out))`

// Toolchain asks python which versions of dists it has installed; a missing one is left
// out of the map. It is the one probe of a python: the export records and pins what it
// answers, and CheckPython refuses a python that lacks what a command needs.
func Toolchain(ctx context.Context, python string, dists ...string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"-c", versionProbe}, dists...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return nil, fmt.Errorf("%s could not say which toolchain it has: it cannot be run (%s)", python, fileutil.Reason(err))
		}
		msg := fmt.Sprintf("%s could not say which toolchain it has (%v)", python, err)
		if tail := lastLineOf(errb.String()); tail != "" {
			msg += ": " + tail
		}
		return nil, errors.New(msg)
	}
	var got map[string]*string
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &got); err != nil {
		return nil, fmt.Errorf("%s could not say which toolchain it has: it answered %q, not the JSON the version probe prints; is it a python?", python, lastLineOf(out.String()))
	}
	res := map[string]string{}
	for k, v := range got {
		if v != nil {
			res[k] = *v
		}
	}
	return res, nil
}

// CheckPython refuses, before any driver starts, a python that cannot be run or that lacks
// one of dists: one sentence naming the python, what it lacks and what to do.
func CheckPython(ctx context.Context, python string, dists ...string) error {
	if python == "" {
		return fmt.Errorf("no python given: %s", PythonHint)
	}
	if _, err := exec.LookPath(python); err != nil {
		return fmt.Errorf("python %s cannot be run (%s): %s", python, LookReason(err), PythonHint)
	}
	got, err := Toolchain(ctx, python, dists...)
	if err != nil {
		return fmt.Errorf("%v: %s", err, PythonHint)
	}
	var missing []string
	for _, d := range dists {
		if _, ok := got[d]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("python %s has %s installed: %s", python, NoneOf(missing), PythonHint)
	}
	return nil
}

// NoneOf says which distributions a python lacks: "no transformers", "none of executorch,
// torch or transformers".
func NoneOf(dists []string) string {
	if len(dists) == 1 {
		return "no " + dists[0]
	}
	return "none of " + strings.Join(dists[:len(dists)-1], ", ") + " or " + dists[len(dists)-1]
}

// LookReason is why exec.LookPath refused a program, in a few words: "not found on PATH",
// "permission denied", "is a directory".
func LookReason(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		if errors.Is(ee.Err, exec.ErrNotFound) {
			return "not found on PATH"
		}
		return fileutil.Reason(ee.Err)
	}
	return fileutil.Reason(err)
}

// lastLineOf is the last non-empty line of a tool's output: a Python traceback ends with
// the error itself.
func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
