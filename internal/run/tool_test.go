package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fake(steps ...string) []string { return append([]string{fakeprog}, steps...) }

func numbered(n int) []string {
	var steps []string
	for i := 1; i <= n; i++ {
		steps = append(steps, fmt.Sprintf("p:line %d", i))
	}
	return steps
}

// toolOutcome is one way a tool run ends: the spec it runs and what its result, error and
// prefixed output must show.
type toolOutcome struct {
	name  string
	spec  Spec
	check func(t *testing.T, res Result, err error, out string)
}

// toolOutcomes builds the cases when the test runs: fake needs the fakeprog TestMain built.
func toolOutcomes() []toolOutcome {
	return []toolOutcome{
		{"prints lines and exits 0", Spec{Argv: fake("p:hello", "e:to stderr", "p:bye")}, checkPrintsLines},
		{"exit 3 keeps the last 40 lines", Spec{Argv: fake(append(numbered(50), "x:3")...)}, checkExit3Tail},
		{"killed by a signal", Spec{Argv: []string{"/bin/sh", "-c", "echo dying; kill -9 $$"}}, checkKilled},
		{"environment is only what the spec gives",
			Spec{Argv: fake("env:A", "env:RUN_TEST_LEAK"), Env: []string{"A=1"}}, checkOwnEnvironment},
		{"secrets are masked in output and errors", Spec{
			Argv: fake("env:HF_TOKEN", "x:2"), Env: []string{"HF_TOKEN=hf_sEcReT"},
			Secrets: []string{"hf_sEcReT"},
		}, checkSecretsMasked},
		{"missing command",
			Spec{Argv: []string{"no-such-tool-exe-expo"}, Env: []string{"PATH=/nonexistent"}}, checkMissingCommand},
		{"bare name found in the tool's PATH",
			Spec{Argv: []string{"sh", "-c", "echo via-path"}, Env: []string{"PATH=/usr/bin:/bin"}}, checkFoundInPath},
	}
}

func checkPrintsLines(t *testing.T, res Result, err error, out string) {
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitStatus)
	want := "[fake] hello\n[fake] to stderr\n[fake] bye\n"
	assert.True(t, strings.HasSuffix(out, want), "output %q does not end with %q", out, want)
	assert.Equal(t, []string{"hello", "to stderr", "bye"}, res.Tail)
}

func checkExit3Tail(t *testing.T, res Result, err error, out string) {
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.Status)
	assert.Equal(t, 3, res.ExitStatus)
	assert.Empty(t, ee.Signal)
	require.Len(t, ee.Tail, 40)
	assert.Equal(t, "line 11", ee.Tail[0])
	assert.Equal(t, "line 50", ee.Tail[39])
	assert.Equal(t, `fake exited with status 3; its last line of output was "line 50" (the lines before it are in the log)`, err.Error())
}

// TestCauseIsTheException: a tool's failure reads as the exception its traceback ends
// with, never the traceback, which stays in the log.
func TestCauseIsTheException(t *testing.T) {
	traceback := []string{
		"Traceback (most recent call last):",
		`  File "/x/export_llm.py", line 40, in main`,
		"    cfg = OmegaConf.merge(base, override)",
		"omegaconf.errors.ConfigKeyError: Key 'groupsize' not in 'QuantizationConfig'",
		"    full_key: quantization.groupsize",
		"    object_type=QuantizationConfig",
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a traceback", &ExitError{Tool: "export_llm", Status: 1, Tail: traceback},
			"export_llm exited with status 1: omegaconf.errors.ConfigKeyError: Key 'groupsize' not in 'QuantizationConfig'"},
		{"a bare exception", &ExitError{Tool: "llama.py", Status: 1, Tail: []string{"loading", "RuntimeError"}},
			"llama.py exited with status 1: RuntimeError"},
		{"no exception", &ExitError{Tool: "t", Status: 2, Tail: []string{"a", "b", "  "}},
			`t exited with status 2; its last line of output was "b" (the lines before it are in the log)`},
		{"no output", &ExitError{Tool: "t", Status: 2}, "t exited with status 2 (no output)"},
		{"a timeout", &TimeoutError{Tool: "t", Timeout: time.Minute, Tail: traceback}, "t timed out after 1m0s and was killed: omegaconf.errors.ConfigKeyError: Key 'groupsize' not in 'QuantizationConfig'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Error())
			assert.NotContains(t, tc.err.Error(), "Traceback")
			assert.NotContains(t, tc.err.Error(), "\n")
		})
	}
}

func checkKilled(t *testing.T, res Result, err error, out string) {
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 137, ee.Status)
	assert.Contains(t, ee.Signal, "9")
	assert.Contains(t, err.Error(), "killed by signal 9")
	assert.Contains(t, err.Error(), "dying")
}

func checkOwnEnvironment(t *testing.T, res Result, err error, out string) {
	require.NoError(t, err)
	assert.Contains(t, out, "[fake] A=1\n")
	assert.Contains(t, out, "[fake] RUN_TEST_LEAK unset\n")
	assert.NotContains(t, out, "must-not-leak", "parent environment leaked")
}

func checkSecretsMasked(t *testing.T, res Result, err error, out string) {
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hf_sEcReT")
	assert.Contains(t, err.Error(), "HF_TOKEN=***")
	assert.NotContains(t, out, "hf_sEcReT")
	assert.Contains(t, out, "[fake] HF_TOKEN=***\n")
}

func checkMissingCommand(t *testing.T, res Result, err error, out string) {
	assert.ErrorContains(t, err, `"no-such-tool-exe-expo" not found`)
	assert.Equal(t, -1, res.ExitStatus)
}

func checkFoundInPath(t *testing.T, res Result, err error, out string) {
	assert.NoError(t, err)
	assert.Contains(t, out, "[fake] via-path\n")
}

// TestToolOutcomes runs each outcome's spec as the tool "fake" with prefixed output and
// hands its result, error and output to the outcome's check.
func TestToolOutcomes(t *testing.T) {
	t.Setenv("RUN_TEST_LEAK", "must-not-leak")
	for _, tc := range toolOutcomes() {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			spec := tc.spec
			spec.Name, spec.Output, spec.Mode, spec.SampleEvery = "fake", &buf, LogPrefixed, -1
			res, err := Tool(context.Background(), spec)
			tc.check(t, res, err, buf.String())
		})
	}
}

// TestToolTimeoutKillsGroup times the run out on a clock the test moves once the tool has
// started its grandchild and said so: the kill is ordered after the tool's own steps by
// that event, and the run's seconds are exactly the timeout.
func TestToolTimeoutKillsGroup(t *testing.T) {
	clk := newFakeClock(time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC))
	out := &hookWriter{hook: func(line string) {
		if line == "[sleeper] waiting" {
			clk.Advance(700 * time.Millisecond)
		}
	}}
	res, err := Tool(context.Background(), Spec{
		Name: "sleeper", Argv: fake("child:60s", "p:waiting", "s:60s"), Timeout: 700 * time.Millisecond,
		Output: out, Mode: LogPrefixed, SampleEvery: -1, clock: clk,
	})
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	var ee *ExitError
	assert.False(t, errors.As(err, &ee), "timeout also reads as ExitError")
	assert.Equal(t, 700*time.Millisecond, te.Timeout)
	assert.Contains(t, err.Error(), "timed out after 700ms")
	assert.Contains(t, err.Error(), "waiting")
	assert.Equal(t, 143, res.ExitStatus, "SIGTERM, which the fake does not trap")
	assert.Equal(t, 0.7, res.Seconds)
	waitGone(t, childPID(t, out.String()))
}

// TestToolContextCancel cancels once the tool has printed its grandchild's pid.
func TestToolContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &hookWriter{hook: func(line string) {
		if strings.HasPrefix(line, "[sleeper] child ") {
			cancel()
		}
	}}
	_, err := Tool(ctx, Spec{
		Name: "sleeper", Argv: fake("child:60s", "s:60s"), Output: out, Mode: LogPrefixed, SampleEvery: -1,
	})
	require.ErrorIs(t, err, context.Canceled)
	var te *TimeoutError
	assert.False(t, errors.As(err, &te), "cancel reads as timeout")
	waitGone(t, childPID(t, out.String()))
}

// TestToolCancelTermThenKill cancels once the tool has said it is ready: the group gets
// SIGTERM, so a tool that traps it cleans up and exits; one that ignores it gets SIGKILL
// after termGrace, well before the pipe grace would kill the tool alone.
func TestToolCancelTermThenKill(t *testing.T) {
	tests := []struct {
		name       string
		steps      []string
		wantStatus int
		wantLine   string // a line the tool prints only when it got SIGTERM
	}{
		{"traps SIGTERM", fake("term:cleaned up", "p:ready", "s:60s"), 143, "[sleeper] cleaned up"},
		{"ignores SIGTERM", fake("noterm", "p:ready", "s:60s"), 137, ""},
		// Stopped is not finished, whatever the exit status says.
		{"traps SIGTERM and exits 0", fake("termok:stopped early", "p:ready", "s:60s"), 0, "[sleeper] stopped early"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cancelled := make(chan time.Time, 1)
			out := &hookWriter{hook: func(line string) {
				if line == "[sleeper] ready" {
					cancelled <- time.Now()
					cancel()
				}
			}}
			res, err := Tool(ctx, Spec{Name: "sleeper", Argv: tc.steps, Output: out, Mode: LogPrefixed, SampleEvery: -1})
			took := time.Since(<-cancelled)
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, tc.wantStatus, res.ExitStatus)
			if tc.wantLine != "" {
				assert.Contains(t, out.String(), tc.wantLine, "the tool did not get SIGTERM first")
			}
			assert.Less(t, took, pipeGrace, "the group's SIGKILL after termGrace did not come")
		})
	}
}

// TestToolReapsGroupAfterExit checks that a grandchild left running when the tool exits
// does not outlive Tool, whether or not it holds the log pipe open. The grandchild sleeps
// a minute: Tool returning well before that shows it did not wait for it, and one that
// holds the pipe costs the pipe grace, which starts only when the tool has exited.
func TestToolReapsGroupAfterExit(t *testing.T) {
	tests := []struct {
		name     string
		argv     []string
		holdPipe bool
	}{
		{"detached from the pipe", fake("child:60s", "p:done"), false},
		{"holding the pipe", []string{"/bin/sh", "-c", "sleep 60 & echo child $!"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			start := time.Now()
			_, err := Tool(context.Background(), Spec{
				Name: "leaver", Argv: tc.argv, Output: &buf, Mode: LogPrefixed, SampleEvery: -1,
			})
			require.NoError(t, err)
			took := time.Since(start)
			assert.Less(t, took, 30*time.Second, "Tool waited for the grandchild")
			if tc.holdPipe {
				assert.GreaterOrEqual(t, took, pipeGrace, "Tool did not wait out the pipe grace")
			}
			waitGone(t, childPID(t, buf.String()))
		})
	}
}

func childPID(t *testing.T, out string) int {
	t.Helper()
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "[sleeper] child "); ok {
			pid, err := strconv.Atoi(rest)
			if err == nil {
				return pid
			}
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "[leaver] child "); ok {
			pid, err := strconv.Atoi(rest)
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no child pid in output %q", out)
	return 0
}

// waitGone waits until pid no longer runs: gone, or a zombie waiting for its reaper. Tool
// has sent SIGKILL by the time this runs, so the limit is only for a process that was never
// killed (the grandchildren here sleep a minute).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(bytes.TrimSpace(stat[i+1:]), []byte("Z")) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("grandchild %d still running after the tool was done", pid)
}

func TestToolRejectsBadSpecs(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"no name", Spec{Argv: []string{"true"}}, "no tool name"},
		{"no argv", Spec{Name: "x"}, "has no command"},
		{"bad env", Spec{Name: "x", Argv: []string{"true"}, Env: []string{"NOEQUALS"}}, "env entry 0 is not KEY=VALUE"},
		{"bad rule", Spec{Name: "x", Argv: []string{"true"}, Stages: []StageRule{{Stage: "a"}}}, "stage rule 0: stage a has no Start"},
		{"other reserved", Spec{Name: "x", Argv: []string{"true"}, Stages: []StageRule{{Stage: "other", AtStart: true}}}, "reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Tool(context.Background(), tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestToolWordsAStartFailure: a program that cannot be started is named with the reason in
// words, not Go's "fork/exec PATH: …".
func TestToolWordsAStartFailure(t *testing.T) {
	dir := t.TempDir()
	notExec := dir + "/export_llm"
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	for _, tc := range []struct{ name, prog, want string }{
		{"missing", dir + "/none", "export could not be started: " + dir + "/none cannot be run (no such file or directory)"},
		{"not executable", notExec, "export could not be started: " + notExec + " cannot be run (permission denied)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Tool(context.Background(), Spec{Name: "export", Argv: []string{tc.prog}, SampleEvery: -1, Output: &bytes.Buffer{}})
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.NotContains(t, err.Error(), "fork/exec")
		})
	}
}
