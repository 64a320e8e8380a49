package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Result is what one tool run cost. Tool returns it also when the tool failed or timed
// out, so that a failure report still has its memory and stage figures.
type Result struct {
	Tool string `json:"tool"`
	// ExitStatus is the exit status (128 + signal when killed), -1 if it never started.
	ExitStatus int `json:"exit_status"`
	// StartedAt is when the process started, in TimeFormat.
	StartedAt string `json:"started_at"`
	// Seconds is the wall time from start to exit, rounded to 0.1.
	Seconds float64 `json:"seconds"`
	// MaxRSSBytes is ru_maxrss of the tool after exit, in bytes: the largest resident set of
	// the tool or any descendant it waited for, and never less than exe-expo's own peak
	// before the start (Go starts a child on the parent's memory, and Linux carries that
	// high-water mark across exec). The report's peak_rss_export_bytes when the tool is the
	// export; exe-expo's tens of MiB are noise beside an export's GiB, not beside a small
	// tool.
	MaxRSSBytes int64 `json:"max_rss_bytes"`
	// Memory is the sampler's view of the host during the run.
	Memory Memory `json:"memory"`
	// Timings says where the time went, by the Spec's stage rules.
	Timings Timings `json:"timings"`
	// Tail holds the last lines of output, oldest first.
	Tail []string `json:"-"`
}

// Tool runs one tool as Spec describes, streaming its output, and waits for it. It returns
// *ExitError when the tool fails, *TimeoutError when it runs past Spec.Timeout, and an error
// wrapping ctx.Err() when ctx ends first; in those cases the whole process group gets
// SIGTERM, and SIGKILL if it is still there termGrace later. No process of the tool's group
// outlives Tool.
func Tool(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Tool: spec.Name, ExitStatus: -1}
	if err := spec.validate(); err != nil {
		return res, err
	}
	path, err := lookPath(spec.Argv[0], spec.Env)
	if err != nil {
		return res, fmt.Errorf("run %s: %w", spec.Name, err)
	}
	clk := spec.clockOrSystem()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if spec.Timeout > 0 {
		stop := clk.AfterFunc(spec.Timeout, func() { cancel(errTimedOut) })
		defer stop()
	}

	out := safeWriter{spec.output()}
	frame := newFrame(spec, out)
	frame.open()
	defer frame.close()
	sink := newSink(spec, out, frame.grouped)
	cmd := command(runCtx, path, spec, sink)
	start := clk.Now()
	sink.clock = newStageClock(spec.Stages, start)
	if err := cmd.Start(); err != nil {
		// Not "fork/exec …: …" (the program and Go's operation): the tool and why in words.
		return res, fmt.Errorf("%s could not be started: %s cannot be run (%s)", spec.Name, spec.Argv[0], fileutil.Reason(err))
	}
	res.StartedAt = start.UTC().Format(TimeFormat)
	var sampler *Sampler
	if spec.sampleEvery() > 0 {
		sampler = startSampler(spec.sampleEvery(), cmd.Process.Pid, realFS, clk)
	}
	stopKill := killAfterGrace(runCtx, cmd.Process.Pid)
	waitErr := cmd.Wait()
	stopKill()
	end := clk.Now()
	// Whatever the group left behind (a daemon, a worker) goes with the tool.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	sink.close()
	if sampler != nil {
		res.Memory = sampler.Stop()
	}
	res.fill(start, end, sink, cmd.ProcessState)
	return res, classify(spec, ctx, runCtx, waitErr, res)
}

func newSink(spec Spec, out io.Writer, grouped bool) *lineSink {
	s := &lineSink{
		out: out, secrets: spec.Secrets, tail: newTail(spec.tailLines()),
		now: spec.clockOrSystem().Now, progressEvery: spec.progressEvery(),
	}
	if spec.Transcript != nil {
		s.transcript = safeWriter{spec.Transcript}
	}
	if !grouped {
		s.prefix = spec.prefix()
	}
	return s
}

// fill records what the finished run left: its time, stages, last lines and exit.
func (r *Result) fill(start, end time.Time, sink *lineSink, ps *os.ProcessState) {
	r.Seconds = round(end.Sub(start).Seconds(), 1)
	r.Timings = sink.clock.finish(end)
	r.Tail = sink.tail.last()
	r.MaxRSSBytes = maxRSS(ps)
	r.ExitStatus = exitStatus(ps)
}

// command builds the exec.Cmd: own process group, explicit environment, stdout and stderr
// merged into one pipe (so their lines keep their order), and a cancel that sends the group
// SIGTERM (killAfterGrace follows it with SIGKILL).
func command(ctx context.Context, path string, spec Spec, sink io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, spec.Argv[1:]...)
	cmd.Args[0] = spec.Argv[0]
	cmd.Dir = spec.Dir
	cmd.Env = append([]string{}, spec.Env...)
	cmd.Stdin = nil
	cmd.Stdout = sink
	cmd.Stderr = sink
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = pipeGrace
	return cmd
}

// killAfterGrace sends the group SIGKILL termGrace after ctx ends, when cmd.Cancel has sent
// it SIGTERM, unless the returned stop is called first: the tool has exited, and the group
// id may not be the tool's much longer. Real time, not the Spec's clock: the grace is for
// a real process to act on its signal.
func killAfterGrace(ctx context.Context, pgid int) (stop func()) {
	exited := make(chan struct{})
	go func() {
		select {
		case <-exited:
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(termGrace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()
	return func() { close(exited) }
}

// errTimedOut is the cause Tool cancels its run with when Spec.Timeout passes.
var errTimedOut = errors.New("timed out")

// classify turns Wait's error into the package's typed errors. A tool that exited 0 has
// succeeded even if the context ended a moment later.
func classify(spec Spec, ctx, runCtx context.Context, waitErr error, res Result) error {
	// A tool told to stop that traps SIGTERM and exits 0 still gets an error here: exec.Cmd.Wait
	// returns the context's error after Cancel (TestToolCancelTermThenKill).
	if waitErr == nil || (errors.Is(waitErr, exec.ErrWaitDelay) && res.ExitStatus == 0) {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("run %s: stopped: %w", spec.Name, ctx.Err())
	}
	if errors.Is(context.Cause(runCtx), errTimedOut) {
		return &TimeoutError{Tool: spec.Name, Timeout: spec.Timeout, Tail: res.Tail}
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		e := &ExitError{Tool: spec.Name, Status: res.ExitStatus, Tail: res.Tail}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = fmt.Sprintf("%d (%s)", int(ws.Signal()), ws.Signal())
		}
		return e
	}
	return fmt.Errorf("run %s: %w", spec.Name, waitErr)
}

func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// maxRSS reads ru_maxrss, which Linux reports in KiB.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}

// lookPath resolves a bare command name against the tool's own PATH, so the tool runs the
// python its environment names rather than whichever the caller's PATH finds first.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar, ok := envValue(env, "PATH")
	if !ok {
		pathVar = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH", name)
}

// frame writes what surrounds the tool's lines: the command line, and on Actions the group
// and a stop-commands token so that nothing the tool prints is taken as a workflow command.
type frame struct {
	spec    Spec
	out     io.Writer
	gha     *githubactions.Action
	grouped bool
	token   string
}

func newFrame(spec Spec, out io.Writer) *frame {
	f := &frame{spec: spec, out: out, grouped: spec.grouped()}
	f.gha = githubactions.New(githubactions.WithWriter(out))
	return f
}

func (f *frame) open() {
	cmdline := "$ " + maskAll(quoteArgv(f.spec.Argv), f.spec.Secrets)
	warn := ""
	if len(f.spec.Stages) > 0 {
		if _, ok := envValue(f.spec.Env, "PYTHONUNBUFFERED"); !ok {
			warn = f.spec.Name + ": PYTHONUNBUFFERED is not set, so stage times from print() lines arrive at exit"
		}
	}
	if !f.grouped {
		io.WriteString(f.out, f.spec.prefix()+cmdline+"\n")
		if warn != "" {
			io.WriteString(f.out, f.spec.prefix()+"warning: "+warn+"\n")
		}
		return
	}
	if warn != "" {
		f.gha.Warningf("%s", warn)
	}
	for _, s := range f.spec.Secrets {
		if s != "" {
			f.gha.AddMask(s)
		}
	}
	f.gha.Group(f.spec.Name)
	io.WriteString(f.out, cmdline+"\n")
	f.token = randomToken()
	f.gha.IssueCommand(&githubactions.Command{Name: "stop-commands", Message: f.token})
}

func (f *frame) close() {
	if !f.grouped {
		return
	}
	if f.token != "" {
		f.gha.IssueCommand(&githubactions.Command{Name: f.token})
	}
	f.gha.EndGroup()
}

func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// quoteArgv renders argv for the log, quoting only the words a shell would split.
func quoteArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`|&;<>()*?[]{}#~") {
			words[i] = strconv.Quote(a)
		} else {
			words[i] = a
		}
	}
	return strings.Join(words, " ")
}
