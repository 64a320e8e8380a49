package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
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

// toolchain asks python which versions of dists it has installed.
func toolchain(ctx context.Context, python string, dists ...string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"-c", versionProbe}, dists...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := fmt.Sprintf("%s could not say which toolchain it has (%v)", python, err)
		if tail := lastLine(errb.String()); tail != "" {
			msg += ": " + tail
		}
		return nil, errors.New(msg)
	}
	var got map[string]*string
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &got); err != nil {
		return nil, fmt.Errorf("%s could not say which toolchain it has: it answered %q, not the JSON the version probe prints; is it a python?", python, lastLine(out.String()))
	}
	res := map[string]string{}
	for k, v := range got {
		if v != nil {
			res[k] = *v
		}
	}
	return res, nil
}

// checkToolchain records the versions the export runs with and refuses a toolchain whose
// ExecuTorch differs from the pin: the app's runtime loads only what its own release wrote.
func (o *Options) checkToolchain(ctx context.Context) (map[string]string, error) {
	v := o.Config.Versions
	dists := []string{"executorch", "torch", "torchao"}
	b := o.spec()
	python := o.Python
	dists = append(dists, b.Tools.Dists...)
	field, env := FieldPython, "EXE_EXPO_PYTHON"
	if b.Tools.MTKPython {
		python = o.MTKPython
		field, env = FieldMTKPython, "MTK_PYTHON"
	}
	got, err := toolchain(ctx, python, dists...)
	if err != nil {
		return nil, err
	}
	et, ok := got["executorch"]
	if !ok {
		return nil, refuse(field, "%s has no executorch installed; the export needs ExecuTorch %s: point %s (or %s) at a python that has it", python, v.ExecuTorch, field, env)
	}
	if base := strings.SplitN(et, "+", 2)[0]; base != v.ExecuTorch {
		return nil, fmt.Errorf("%s has executorch %s, and the app's runtime is ExecuTorch %s (config/versions.env): files written by another release may not load", python, et, v.ExecuTorch)
	}
	if b.Tools.Pins != nil {
		for dist, pin := range b.Tools.Pins(v) {
			if have := got[dist]; !strings.HasPrefix(have, pin) {
				return nil, fmt.Errorf("%s has %s %q, the pin is %s (NeuroPilot SDK %s)", python, dist, have, pin, v.NeuroPilotSDKBuild)
			}
		}
	}
	return got, nil
}

// lastLine is the last non-empty line of a tool's output: a Python traceback ends with
// the error itself.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
