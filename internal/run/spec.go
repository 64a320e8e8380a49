package run

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// LogMode chooses how a tool's output is framed in the log.
type LogMode int

const (
	// LogAuto groups on GitHub Actions (GITHUB_ACTIONS=true) and prefixes elsewhere.
	LogAuto LogMode = iota
	// LogGrouped folds the output into one ::group::<name> block, the way Actions logs
	// stay readable when a tool prints thousands of lines. Actions groups do not nest, so
	// the caller must not have a group open.
	LogGrouped
	// LogPrefixed starts every line with "[name] " so interleaved local runs stay legible.
	LogPrefixed
)

// Defaults, chosen for multi-hour exports on CI runners.
const (
	DefaultTailLines     = 40
	DefaultSampleEvery   = 5 * time.Second
	DefaultProgressEvery = 30 * time.Second
	// maxLineBytes bounds one buffered line, so a tool that never prints a newline cannot
	// make the runner hold its whole output.
	maxLineBytes = 64 << 10
	// maxTailLineBytes bounds each kept line, so an error message stays readable.
	maxTailLineBytes = 1000
	// pipeGrace is how long Tool waits for the output pipe after the tool exits, in case a
	// grandchild still holds it open.
	pipeGrace = 2 * time.Second
	// termGrace is how long a cancelled or timed-out tool's group has between SIGTERM and
	// SIGKILL: time for a tool that traps SIGTERM to remove its partial output, short
	// enough that exe-expo itself ends within a second of Ctrl-C.
	termGrace = 500 * time.Millisecond
)

// Spec describes one tool run. Only Name and Argv are required.
type Spec struct {
	// Name identifies the tool in logs and errors, e.g. "export_llm".
	Name string
	// Argv is the command line; Argv[0] is looked up in Env's PATH when it has no slash.
	// Argv is printed in the log, so it must never carry a secret.
	Argv []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env is the tool's complete environment as KEY=VALUE pairs. Nothing is inherited:
	// a tool sees only what the recipe decided (use EnvFrom to copy PATH or HOME). Values
	// are never printed.
	Env []string
	// Secrets are values that must never reach a log or an error (tokens in Env). They are
	// masked in the tool's output and registered with ::add-mask:: on Actions.
	Secrets []string
	// Timeout kills the process group after this long; zero means no limit.
	Timeout time.Duration
	// Output receives the framed log; nil means os.Stdout.
	Output io.Writer
	// Transcript, if set, receives every line, progress redraws included, each after its
	// arrival time ("2026-09-12T10:00:00.000Z "), so that a saved log can later show where
	// the stage times came from. Secrets are masked here too.
	Transcript io.Writer
	// Mode frames the output; LogAuto by default.
	Mode LogMode
	// LogPrefix replaces the local "[name] " prefix.
	LogPrefix string
	// TailLines is how many last lines are kept for errors; 0 means DefaultTailLines.
	TailLines int
	// SampleEvery is the memory sampling interval; 0 means DefaultSampleEvery, negative
	// turns the sampler off.
	SampleEvery time.Duration
	// ProgressEvery throttles carriage-return progress bars (tqdm): at most one such
	// update per interval reaches the log. 0 means DefaultProgressEvery; negative prints all.
	ProgressEvery time.Duration
	// Stages are the log-line rules that time the tool's stages (each backend's own, internal/backend/<name>).
	Stages []StageRule

	// clock is nil for the system clock; the package's tests set their own.
	clock clock
}

// EnvFrom copies the named variables from this process's environment, for the few a tool
// needs from its host (PATH, HOME, TMPDIR). Unset names are skipped.
func EnvFrom(names ...string) []string {
	var env []string
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

func (s Spec) validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("run: spec has no tool name")
	}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return fmt.Errorf("run %s: spec has no command", s.Name)
	}
	for i, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("run %s: env entry %d is not KEY=VALUE", s.Name, i)
		}
	}
	for i, r := range s.Stages {
		if err := r.validate(); err != nil {
			return fmt.Errorf("run %s: stage rule %d: %w", s.Name, i, err)
		}
	}
	return nil
}

func (s Spec) grouped() bool {
	switch s.Mode {
	case LogGrouped:
		return true
	case LogPrefixed:
		return false
	}
	return os.Getenv("GITHUB_ACTIONS") == "true"
}

func (s Spec) prefix() string {
	if s.LogPrefix != "" {
		return s.LogPrefix
	}
	return "[" + s.Name + "] "
}

func (s Spec) tailLines() int {
	if s.TailLines > 0 {
		return s.TailLines
	}
	return DefaultTailLines
}

func (s Spec) sampleEvery() time.Duration {
	if s.SampleEvery == 0 {
		return DefaultSampleEvery
	}
	return s.SampleEvery
}

func (s Spec) progressEvery() time.Duration {
	if s.ProgressEvery == 0 {
		return DefaultProgressEvery
	}
	return s.ProgressEvery
}

func (s Spec) clockOrSystem() clock {
	if s.clock != nil {
		return s.clock
	}
	return systemClock{}
}

func (s Spec) output() io.Writer {
	if s.Output != nil {
		return s.Output
	}
	return os.Stdout
}

// envValue returns the last value of key in env, as the kernel's execve users read it.
func envValue(env []string, key string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}
