package export

import (
	"context"
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/family"
)

// checkToolchain records the versions the export runs with and refuses a toolchain whose
// ExecuTorch differs from the pin: the app's runtime loads only what its own release wrote.
// needs are distributions the caller's own drivers import besides (the solve's transformers):
// a python without one is refused here, before anything is downloaded.
func (o *Options) checkToolchain(ctx context.Context, needs ...string) (map[string]string, error) {
	v := o.Config.Versions
	dists := []string{"executorch", "torch", "torchao"}
	dists = append(dists, needs...)
	b := o.spec()
	python := o.Python
	dists = append(dists, b.Tools.Dists...)
	field, env := FieldPython, "EXE_EXPO_PYTHON"
	if b.Tools.MTKPython {
		python = o.MTKPython
		field, env = FieldMTKPython, "MTK_PYTHON"
	}
	got, err := drivers.Toolchain(ctx, python, dists...)
	if err != nil {
		return nil, err
	}
	et, ok := got["executorch"]
	if !ok {
		return nil, refuse(field, "%s has no executorch installed; the export needs ExecuTorch %s: point %s (or %s) at a python that has it", python, v.ExecuTorch, field, env)
	}
	var missing []string
	for _, d := range needs {
		if _, ok := got[d]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return nil, refuse(field, "%s has %s installed, which the solve's calibration and fp32 reference run with: point %s (or %s) at the export environment's python (python/install.sh installs it and prints its path)",
			python, drivers.NoneOf(missing), field, env)
	}
	if base := strings.SplitN(et, "+", 2)[0]; base != v.ExecuTorch {
		return nil, fmt.Errorf("%s has executorch %s, and the runtime of %s is ExecuTorch %s (config/versions.env): files written by another release may not load", python, et, family.TheApp, v.ExecuTorch)
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
