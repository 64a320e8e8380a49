package action

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/result"
)

// delimiter is go-githubactions' fixed (and misspelt) multiline delimiter.
const delimiter = "_GitHubActionsFileCommandDelimeter_"

// fakeCLI stands in for cli.Main: it records the command lines (without the --result the
// action adds) and answers with a fixed exit code, output and result (reason and outputs),
// or with what answer computes; noResult leaves no result, as a CLI that crashed would.
type fakeCLI struct {
	code           int
	stdout, stderr string
	reason         string
	outputs        result.Outputs
	noResult       bool
	answer         func(args []string, stdout, stderr io.Writer) int
	calls          [][]string
}

func (f *fakeCLI) run(_ context.Context, args []string, stdout, stderr io.Writer) int {
	path := ""
	if n := len(args); n >= 2 && args[n-2] == "--result" {
		path, args = args[n-1], args[:n-2]
	}
	f.calls = append(f.calls, append([]string(nil), args...))
	code := f.code
	if f.answer != nil {
		code = f.answer(args, stdout, stderr)
	} else {
		_, _ = io.WriteString(stdout, f.stdout)
		_, _ = io.WriteString(stderr, f.stderr)
	}
	if path == "" || f.noResult {
		return code
	}
	res := result.New(args[0])
	res.Reason, res.Outputs = f.reason, f.outputs
	res.Finish(code)
	if err := result.Write(path, res); err != nil {
		panic(err)
	}
	return code
}

// step is one action step under test: its inputs and runner files, what it printed (the
// log and the workflow commands in one stream, in order) and the variables it set.
type step struct {
	env     map[string]string
	log     bytes.Buffer
	stderr  bytes.Buffer
	setenv  map[string]string
	outPath string
	sumPath string
}

// newStep lays out the runner's files for a step with inputs (by input id).
func newStep(t *testing.T, inputs map[string]string) *step {
	t.Helper()
	dir := t.TempDir()
	s := &step{
		env:     map[string]string{},
		setenv:  map[string]string{},
		outPath: filepath.Join(dir, "output"),
		sumPath: filepath.Join(dir, "summary"),
	}
	for _, p := range []string{s.outPath, s.sumPath} {
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	s.env["GITHUB_OUTPUT"] = s.outPath
	s.env["GITHUB_STEP_SUMMARY"] = s.sumPath
	for k, v := range inputs {
		s.env["INPUT_"+strings.ToUpper(k)] = v
	}
	return s
}

// envWith is the step's Env with run as the CLI.
func (s *step) envWith(run Runner) Env {
	return Env{
		Ctx: context.Background(), GH: githubactionsWith(&s.log, func(k string) string { return s.env[k] }), Run: run, Stdout: &s.log, Stderr: &s.stderr,
		Setenv: func(k, v string) error { s.setenv[k] = v; return nil },
	}
}

// outputs parses the step's output file, holding it to the multiline format.
func (s *step) outputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(s.outPath)
	require.NoError(t, err)
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	require.Equal(t, "", lines[len(lines)-1], "the output file must end with a newline")
	lines = lines[:len(lines)-1]
	for i := 0; i < len(lines); {
		name, ok := strings.CutSuffix(lines[i], "<<"+delimiter)
		require.True(t, ok, "line %d of the output file is not name<<delimiter: %q", i+1, lines[i])
		var value []string
		i++
		for ; i < len(lines) && lines[i] != delimiter; i++ {
			value = append(value, lines[i])
		}
		require.Less(t, i, len(lines), "output %s has no closing delimiter", name)
		i++
		out[name] = strings.Join(value, "\n")
	}
	return out
}

// githubactionsWith is an Action writing to w and reading its environment from getenv.
func githubactionsWith(w io.Writer, getenv githubactions.GetenvFunc) *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(w), githubactions.WithGetenv(getenv))
}
