package setup

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/sethvargo/go-githubactions"
	"github.com/stretchr/testify/require"
)

// fakeHost records every command and answers the host's questions from its fields; nothing
// runs and no sudo is asked.
type fakeHost struct {
	cmds []Cmd
	// fail makes a command fail when its argv, joined by spaces, starts with a key.
	fail map[string]error
	// effect runs after a command is recorded (to create what the real one would).
	effect func(c Cmd)
	// stat answers Stat; nil means every path is one file system with 10 GiB free.
	stat  func(path string) (FS, error)
	globs map[string][]string
	look  map[string]string
	vars  map[string]string
	host  run.HostFacts
	swaps []string
}

func (f *fakeHost) env() Env {
	return Env{
		Run: func(_ context.Context, c Cmd) error {
			f.cmds = append(f.cmds, c)
			if f.effect != nil {
				f.effect(c)
			}
			line := strings.Join(c.Argv, " ")
			for prefix, err := range f.fail {
				if strings.HasPrefix(line, prefix) {
					return err
				}
			}
			return nil
		},
		Stat: func(path string) (FS, error) {
			if f.stat == nil {
				return FS{Dev: 1, Free: 10 * gib}, nil
			}
			return f.stat(path)
		},
		Glob: func(p string) ([]string, error) { return f.globs[p], nil },
		Host: func(dir string) (run.HostFacts, error) {
			h := f.host
			h.DiskPath = dir
			return h, nil
		},
		LookPath: func(name string) (string, error) {
			if p, ok := f.look[name]; ok {
				return p, nil
			}
			return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
		},
		Getenv: func(k string) string { return f.vars[k] },
		Swaps:  func() ([]string, error) { return f.swaps, nil },
	}
}

// argv lists the recorded commands one per line, as a reader of the log sees them.
func (f *fakeHost) argv() []string {
	out := make([]string, len(f.cmds))
	for i, c := range f.cmds {
		out[i] = strings.Join(c.Argv, " ")
	}
	return out
}

// logger is an Action writing its workflow commands into buf.
func logger(buf *bytes.Buffer) *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(buf), githubactions.WithGetenv(func(string) string { return "" }))
}

// configFor is the committed pins and the named backend's tools.
func configFor(t *testing.T, name string) Config {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	b := backend.ByName(name)
	require.NotNil(t, b, name)
	return ConfigFor(cfg, b)
}

// noEntry is what os.Stat says of a missing path, for a fake Stat.
func noEntry(path string) error { return &fs.PathError{Op: "statfs", Path: path, Err: fs.ErrNotExist} }

// repoRoot is this checkout's root.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "cmd", "exe-expo"))
	require.NoError(t, err)
	return root
}
