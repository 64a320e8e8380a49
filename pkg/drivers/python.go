package drivers

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
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
