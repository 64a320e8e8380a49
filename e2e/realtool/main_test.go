// Package realtool runs exe-expo against the real ExecuTorch toolchain (the locked
// environment of python/export.lock: executorch, torch, torchao, transformers) on tiny real
// models built in the test (internal/tinymodel). Nothing here is a stand-in: export_llm, the
// GPTQ solve, the text LLM runner and the gate's fp32 reference all run for real. The
// package holds tests only.
//
// The python comes from EXE_EXPO_PYTHON. Without one that imports the pinned ExecuTorch the
// tests skip, and under EXE_EXPO_CI=1 (where .ci/run installs the lock) they fail.
package realtool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/tinymodel"
)

// Replies the tiny models are taught: model A's, and the other model's the gate must tell
// apart from it.
const (
	replyA = "Paris is the answer."
	replyB = "Berlin, I think."
)

var (
	pythonOnce sync.Once
	pythonPath string
	pythonErr  string

	modelsMu sync.Mutex
	models   = map[string]*modelOnce{}
	root     string
)

type modelOnce struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "realtool-")
	if err != nil {
		panic(err)
	}
	root = dir
	// plan's Hub look-ups are answered by the embedded snapshot: the tests never reach out.
	os.Setenv("EXE_EXPO_OFFLINE", "1")
	// Tests run two at a time on CI's two cores: torch's default of a thread per core in
	// each of them would oversubscribe the machine (spinning OpenMP threads; a tiny model's
	// build took 4 times as long). export passes OMP_NUM_THREADS to its tools.
	if os.Getenv("OMP_NUM_THREADS") == "" {
		os.Setenv("OMP_NUM_THREADS", "1")
	}
	code := m.Run()
	fmt.Println(buildSummary())
	if os.Getenv("REALTOOL_KEEP") == "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// python is the real toolchain's python, or the test skips (fails under EXE_EXPO_CI=1).
func python(t *testing.T) string {
	t.Helper()
	pythonOnce.Do(func() {
		p := os.Getenv("EXE_EXPO_PYTHON")
		if p == "" {
			pythonErr = "EXE_EXPO_PYTHON is not set (python/install.sh installs the locked environment and prints it)"
			return
		}
		out, err := exec.Command(p, "-c", "from importlib.metadata import version; print(version('executorch'), version('torch'), version('transformers'))").CombinedOutput()
		if err != nil {
			pythonErr = "EXE_EXPO_PYTHON=" + p + " cannot import ExecuTorch: " + lastLines(string(out), 3)
			return
		}
		if !strings.HasPrefix(strings.TrimSpace(string(out)), pinned.Version()+" ") {
			pythonErr = "EXE_EXPO_PYTHON=" + p + " has executorch, torch, transformers " + strings.TrimSpace(string(out)) + ", not the lock's " + pinned.Version()
			return
		}
		pythonPath = p
	})
	if pythonErr != "" {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatal("EXE_EXPO_CI=1 and " + pythonErr)
		}
		t.Skip("skipping: " + pythonErr)
	}
	return pythonPath
}

// tiny is the family's tiny model taught reply (built once per package run).
func tiny(t *testing.T, family, reply string, seed int) string {
	t.Helper()
	py := python(t)
	key := family + "|" + reply
	modelsMu.Lock()
	m, ok := models[key]
	if !ok {
		m = &modelOnce{}
		models[key] = m
	}
	modelsMu.Unlock()
	m.once.Do(func() {
		f, err := tinymodel.Lookup(family)
		if err != nil {
			m.err = err
			return
		}
		cfg, err := config.Default()
		if err != nil {
			m.err = err
			return
		}
		// The folder is named as the Hub model is, so export names its files as it would.
		dir := filepath.Join(root, "models", fmt.Sprintf("%s-%d", family, seed), filepath.Base(f.ID))
		start := time.Now()
		_, m.err = tinymodel.Build(context.Background(), py, cfg, f, dir, tinymodel.Options{Seed: seed, Reply: reply})
		m.dir = dir
		if m.err == nil {
			built(t, "tiny model", key, start)
		}
	})
	require.NoError(t, m.err)
	return m.dir
}

// exeExpo runs the CLI in-process with the real python and returns its exit code and output.
func exeExpo(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = cli.Main(context.Background(), args, strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

// mustExeExpo runs the CLI and requires exit 0.
func mustExeExpo(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := exeExpo(t, args...)
	require.Equal(t, 0, code, "exe-expo %s\nstdout:\n%s\nstderr (end):\n%s", strings.Join(args, " "), out, lastLines(errOut, 40))
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
