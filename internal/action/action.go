// Package action is what each GitHub Action of this repository (actions/<name>/action.yml and
// the root action.yml) does between reading its inputs and exiting: the inputs become the
// command line of the CLI command the action stands for, so an action and `exe-expo <command>`
// can never drift apart, and the command's exit code becomes outputs and annotations the
// workflow can act on. Every action runs one main, cmd/exe-expo-action, with its name
// (Dispatch); that main only exits with what a function here returns, so every behaviour is
// testable without a runner.
package action

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/result"
)

// Runner runs the CLI with args (no program name) and returns its exit code. Tests give a
// fake one, so the exit-code mapping is checked without a model or a toolchain.
type Runner func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Env is what an action may touch.
type Env struct {
	Ctx context.Context
	// GH reads the inputs and the runner's environment and writes workflow commands,
	// outputs and the step summary.
	GH *githubactions.Action
	// Run is the CLI; Main gives cli.Main.
	Run Runner
	// Stdout and Stderr are the step's log, where the command's own output is passed on.
	Stdout, Stderr io.Writer
	// Setenv hands a secret input to the CLI under the variable it reads (HF_TOKEN,
	// GH_TOKEN); the CLI runs in this process.
	Setenv func(key, value string) error
}

// Main is the Env of a real action step: the process's streams and environment, and the CLI.
func Main(ctx context.Context) Env {
	return Env{
		Ctx:    ctx,
		GH:     githubactions.New(),
		Run:    RunCLI,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Setenv: os.Setenv,
	}
}

// RunCLI is cli.Main as a Runner, with nothing on stdin.
func RunCLI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Main(ctx, args, strings.NewReader(""), stdout, stderr)
}

// secret is an input that holds a token, and the variable the CLI reads it from.
type secret struct{ input, env string }

var (
	hfToken     = secret{"hf-token", "HF_TOKEN"}
	githubToken = secret{"github-token", "GH_TOKEN"}
)

// maskSecrets registers each secret input with the runner before anything else is printed,
// then hands it to the CLI; an empty input leaves the variable as the job set it.
func (e Env) maskSecrets(secrets ...secret) error {
	for _, s := range secrets {
		v := e.GH.GetInput(s.input)
		if v == "" {
			continue
		}
		e.GH.AddMask(v)
		if err := e.Setenv(s.env, v); err != nil {
			return fmt.Errorf("input %s: hand the token to the command as %s: %w", s.input, s.env, err)
		}
	}
	return nil
}

// run is one run of the CLI: its exit code, its result (--result) and what it printed on
// stdout.
type run struct {
	code   int
	res    *result.Result
	stdout string
	// missing says why the CLI left no readable result.
	missing error
}

// cli runs the CLI with args and reads the result it writes (--result, in a temporary
// file), which is what the action acts on: its reason, its outputs. The command's stderr
// goes to the step log as it comes; its stdout is passed on too when show is set (plan's
// JSON is not shown). Unshown, its workflow commands still reach the runner as they come:
// the CLI masks the tokens of the job's environment that way.
func (e Env) cli(args []string, show bool) run {
	var out bytes.Buffer
	stdout := io.MultiWriter(&out, &commands{w: e.Stdout})
	if show {
		stdout = io.MultiWriter(&out, e.Stdout)
	}
	dir, err := os.MkdirTemp("", "exe-expo-result-")
	if err != nil {
		return run{code: cli.ExitFailed, missing: fmt.Errorf("make a folder for the command's result: %w", err)}
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "result.json")
	args = append(append([]string(nil), args...), "--result", path)
	code := e.Run(e.Ctx, args, stdout, e.Stderr)
	r := run{code: code, stdout: out.String()}
	r.res, r.missing = result.Read(path)
	if r.missing == nil && r.res.ExitCode != code {
		r.missing = fmt.Errorf("its result says exit code %d, and it exited with %d", r.res.ExitCode, code)
		r.res = nil
	}
	return r
}

// reason is the sentence the command's result gives for not succeeding.
func (r run) reason() string {
	if r.res == nil {
		return fmt.Sprintf("exe-expo exited with code %d and left no result to say why (%v)", r.code, r.missing)
	}
	return r.res.Reason
}

// outputs is what the command's result says it made; nil when it left no result.
func (r run) outputs() *result.Outputs {
	if r.res == nil {
		return nil
	}
	return &r.res.Outputs
}

// issued reports whether the command already wrote a workflow command of this kind
// ("warning"), so the action does not repeat its annotation.
func (r run) issued(kind string) bool {
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "::"+kind+" ") || strings.HasPrefix(line, "::"+kind+"::") {
			return true
		}
	}
	return false
}

// fail annotates the step with the action's name as the title and returns code, so that a
// failed step says why on the run's page without opening the log.
func (e Env) fail(action string, code int, format string, args ...any) int {
	e.GH.WithFieldsMap(map[string]string{"title": action}).Errorf(format, args...)
	return code
}

// annotate maps the exit code of the command to the action's: 0 stays 0; 4 (a window this
// host cannot build) becomes a warning and exit 0, so the matrix job that drew it stays
// green while the caller reads the skipped output; anything else is an error annotation
// with the command's reason and the same exit code.
func (e Env) annotate(action string, r run) int {
	switch r.code {
	case cli.ExitOK:
		return cli.ExitOK
	case cli.ExitSkipped:
		if !r.issued("warning") {
			e.GH.WithFieldsMap(map[string]string{"title": action}).Warningf("skipped: %s", r.reason())
		}
		return cli.ExitOK
	default:
		return e.fail(action, r.code, "%s", r.reason())
	}
}

// boolInput reads a "true"/"false" input; empty is def. Anything else is refused by name,
// since a workflow that writes `dry-run: yes` must not publish.
func (e Env) boolInput(name string, def bool) (bool, error) {
	switch v := e.GH.GetInput(name); v {
	case "":
		return def, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, fmt.Errorf("input %s is %q; give true or false", name, v)
	}
}

// intInput reads a whole number of at least min; empty is 0 when not required.
func (e Env) intInput(name string, required bool, min int) (int, error) {
	v := e.GH.GetInput(name)
	if v == "" {
		if required {
			return 0, fmt.Errorf("input %s is required", name)
		}
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("input %s is %q, not a whole number", name, v)
	}
	if n < min {
		return 0, fmt.Errorf("input %s is %d; it must be at least %d", name, n, min)
	}
	return n, nil
}

// input reads an optional input; empty is def, the default its action.yml gives too, so a
// step given an empty value still behaves as documented.
func (e Env) input(name, def string) string {
	if v := e.GH.GetInput(name); v != "" {
		return v
	}
	return def
}

// workDir is the work input, else dir under $RUNNER_TEMP (action.yml defaults cannot read
// the runner context), else fallback.
func (e Env) workDir(dir, fallback string) string {
	if w := e.GH.GetInput("work"); w != "" {
		return w
	}
	if tmp := e.GH.Getenv("RUNNER_TEMP"); tmp != "" {
		return filepath.Join(tmp, dir)
	}
	return fallback
}

// required reads an input the action cannot run without (the runner does not enforce
// `required: true`).
func (e Env) required(name string) (string, error) {
	v := e.GH.GetInput(name)
	if v == "" {
		return "", fmt.Errorf("input %s is required", name)
	}
	return v, nil
}

// flags appends `--flag value` for each pair whose value is set, in order, so an unset input
// leaves the CLI's own default (and its environment variable) in force.
func flags(args []string, pairs ...string) []string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			args = append(args, pairs[i], pairs[i+1])
		}
	}
	return args
}

// commands passes on to w the lines written to it that are workflow commands ("::"), each
// once it is complete.
type commands struct {
	w    io.Writer
	line []byte
}

func (c *commands) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.line = append(c.line, p...)
			break
		}
		c.line = append(c.line, p[:i+1]...)
		p = p[i+1:]
		if bytes.HasPrefix(c.line, []byte("::")) {
			if _, err := c.w.Write(c.line); err != nil {
				return n, err
			}
		}
		c.line = c.line[:0]
	}
	return n, nil
}
