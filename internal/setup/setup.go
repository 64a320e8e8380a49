// Package setup prepares a GitHub Actions runner for an export: it frees disk, adds the
// swap file the plan's runner tier asks for, puts the work folder and the Hugging Face
// cache on the larger file system, installs the Python environment config/versions.env
// pins, fetches the vendor SDK the backend needs and builds exe-expo. The setup-export
// action's main only reads its inputs and calls Action; every decision is here, driven
// through Env so that tests run it without sudo, network or a second file system.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// Inputs are the action's inputs, parsed.
type Inputs struct {
	// Backend decides the Python distributions and the vendor SDK.
	Backend string
	// SwapGiB is the swap file to add; 0 adds none.
	SwapGiB int
	// FreeDisk deletes the runner's preinstalled toolchains an export never uses.
	FreeDisk bool
	// PythonEnv installs the pinned environment; false when a job only needs exe-expo.
	PythonEnv bool
	// SDK fetches the backend's vendor SDK.
	SDK bool
	// WorkRoot, when set, holds the work folder instead of the larger file system.
	WorkRoot string
}

// maxSwapGiB bounds swap-gib: a typo such as 240 for 24 would otherwise fill the disk
// before the export starts.
const maxSwapGiB = 128

// ParseInputs reads the inputs through get (the action's GetInput) and refuses anything
// but "true"/"false" for a boolean and a whole number for swap-gib, naming the input.
func ParseInputs(get func(string) string) (Inputs, error) {
	in := Inputs{Backend: get("backend"), WorkRoot: get("work-root")}
	if in.Backend == "" {
		return in, fmt.Errorf("input backend is required (one of %s)", strings.Join(backend.NamesOf(backend.Exportable()), ", "))
	}
	swap := get("swap-gib")
	if swap == "" {
		swap = "0"
	}
	n, err := strconv.Atoi(swap)
	if err != nil || n < 0 || n > maxSwapGiB {
		return in, fmt.Errorf("input swap-gib is %q, not a whole number of GiB from 0 to %d", swap, maxSwapGiB)
	}
	in.SwapGiB = n
	for _, b := range []struct {
		name string
		to   *bool
	}{{"free-disk", &in.FreeDisk}, {"python-env", &in.PythonEnv}, {"sdk", &in.SDK}} {
		v, err := parseBool(b.name, get(b.name))
		if err != nil {
			return in, err
		}
		*b.to = v
	}
	if in.WorkRoot != "" && !filepath.IsAbs(in.WorkRoot) {
		return in, fmt.Errorf("input work-root is %q, not an absolute path", in.WorkRoot)
	}
	return in, nil
}

// parseBool takes exactly "true" or "false" (empty is the default, true): an action input
// is a string, and "yes" or "1" silently meaning false would hide a mistake.
func parseBool(name, v string) (bool, error) {
	switch v {
	case "", "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("input %s is %q, not true or false", name, v)
}

// Backend finds the backend an input names, refusing one nothing is exported to.
func Backend(name string) (*backend.Backend, error) {
	b := backend.ByName(name)
	if b == nil {
		return nil, fmt.Errorf("input backend is %q, not one of %s", name, strings.Join(backend.NamesOf(backend.Exportable()), ", "))
	}
	if b.Recipe == nil {
		return nil, fmt.Errorf("input backend is %s, which nothing is exported to: %s", name, b.Unavailable)
	}
	return b, nil
}

// Cmd is one command setup runs.
type Cmd struct {
	Argv []string
	// Dir is the working directory; empty is the current one.
	Dir string
	// Env is added to this process's environment.
	Env []string
}

func (c Cmd) String() string {
	q := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes a word the way a reader pastes it into a shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:+@,%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FS is one file system as setup weighs it.
type FS struct {
	// Dev tells two paths on one file system apart from two file systems.
	Dev uint64
	// Free is what an unprivileged writer can still write.
	Free int64
}

// Logger is what setup writes to the job's log (a *githubactions.Action).
type Logger interface {
	Infof(msg string, args ...any)
	Warningf(msg string, args ...any)
	Group(title string)
	EndGroup()
}

// Env is everything setup does to the host, so that tests replace each part.
type Env struct {
	// Run runs a command with its output going to the job's log.
	Run func(ctx context.Context, c Cmd) error
	// Stat weighs the file system holding path.
	Stat func(path string) (FS, error)
	// Glob lists the existing paths a pattern matches.
	Glob func(pattern string) ([]string, error)
	// Host reads the host facts with dir's file system.
	Host func(dir string) (run.HostFacts, error)
	// LookPath finds a program on PATH.
	LookPath func(name string) (string, error)
	// Swaps lists the active swap files and devices (/proc/swaps).
	Swaps func() ([]string, error)
	// HTTP downloads the SDKs.
	HTTP *http.Client
	// Getenv reads RUNNER_TEMP, HOME, RUNNER_OS, RUNNER_ARCH, GITHUB_ACTION_PATH and EXE_EXPO_ROOT.
	Getenv func(string) string
	// Stdout is where commands write.
	Stdout io.Writer
}

// HostEnv is the real host: commands run with their output in the job's log.
func HostEnv(stdout io.Writer) Env {
	return Env{
		Run:      runCmd(stdout),
		Stat:     statFS,
		Glob:     filepath.Glob,
		Host:     run.Host,
		LookPath: exec.LookPath,
		Swaps:    procSwaps,
		HTTP:     &http.Client{Transport: transport()},
		Getenv:   os.Getenv,
		Stdout:   stdout,
	}
}

func runCmd(stdout io.Writer) func(ctx context.Context, c Cmd) error {
	return func(ctx context.Context, c Cmd) error {
		cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
		cmd.Dir = c.Dir
		cmd.Stdout, cmd.Stderr = stdout, stdout
		if len(c.Env) > 0 {
			cmd.Env = append(os.Environ(), c.Env...)
		}
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s exited with status %d", c.Argv[0], ee.ExitCode())
		}
		if err != nil {
			return fmt.Errorf("%s could not be started: %s", c.Argv[0], reason(err))
		}
		return nil
	}
}

// reason drops the `exec: "x": ` prefix Go puts before a start failure.
func reason(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	return err.Error()
}

// transport is Go's default one, with a bound on the wait for an answer's headers: a
// publisher that accepts the connection and never answers would otherwise hold the job
// until its timeout. The body has none, since an SDK takes minutes to arrive.
func transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	return t
}

// procSwaps reads /proc/swaps.
func procSwaps() ([]string, error) {
	data, err := os.ReadFile("/proc/swaps")
	if err != nil {
		return nil, err
	}
	return parseSwaps(string(data)), nil
}

// parseSwaps is the first column of /proc/swaps below its header.
func parseSwaps(text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); i > 0 && len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

func statFS(path string) (FS, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return FS{}, fmt.Errorf("cannot weigh the file system of %s: %s", path, err)
	}
	var s syscall.Stat_t
	if err := syscall.Stat(path, &s); err != nil {
		return FS{}, fmt.Errorf("cannot weigh the file system of %s: %s", path, err)
	}
	return FS{Dev: uint64(s.Dev), Free: int64(st.Bavail) * int64(st.Bsize)}, nil
}

// Config is what setup needs besides the inputs: the pins and the backend's tools.
type Config struct {
	Versions config.Versions
	Tools    backend.Tools
}

// ConfigFor is the pins and tools for a backend.
func ConfigFor(cfg *config.Config, b *backend.Backend) Config {
	return Config{Versions: cfg.Versions, Tools: b.Tools}
}

// gib is one GiB in bytes.
const gib = int64(1) << 30

// human writes bytes as people read disk sizes.
func human(n int64) string {
	switch {
	case n >= gib:
		return fmt.Sprintf("%.1f GiB", float64(n)/float64(gib))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
