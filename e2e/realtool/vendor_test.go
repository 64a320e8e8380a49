package realtool

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The vendor tests run the pinned ExecuTorch's real Qualcomm and MediaTek LLM scripts, from
// exe-expo's own recipes, as far as a machine without the vendor SDKs lets them go: to the
// first call into the SDK. What each stand-in replaces, and why, is in the docstrings of
// testdata/vendor/*.py; docs/research/vendor-real.md has the findings.

// vendorScript is the absolute path of a driver in testdata/vendor.
func vendorScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "vendor", name))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// linkFolder links every file of from into to (which it creates), except those named in
// skip: a model folder another test may share, seen through links and never written.
func linkFolder(t *testing.T, from, to string, skip ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(to, 0o755))
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || contains(skip, e.Name()) {
			continue
		}
		src, err := filepath.Abs(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.Symlink(src, filepath.Join(to, e.Name())))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runPython runs a driver with the real toolchain's python and returns its combined output.
func runPython(t *testing.T, dir string, env []string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
