package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Runner runs the embedded drivers with one python interpreter.
type Runner struct {
	// Python is the interpreter with torch (for example a venv's bin/python).
	Python string
	// Dir is where the scripts are written before a run; empty means a fresh temporary
	// folder per run, removed afterwards.
	Dir string
	// Env is added to the inherited environment.
	Env []string
	// Log, when set, receives the driver's stderr as it runs (progress lines).
	Log io.Writer
}

// Error is a driver that exited non-zero: its JSON error if it printed one, and the tail of
// its stderr for a traceback. Error() is one sentence for a user: the driver's own error,
// else the exception a traceback ends with, never the traceback itself (a Runner with a
// Log has shown it there as it ran).
type Error struct {
	Script string
	// Python is the interpreter that ran the script.
	Python string
	// Status is the exit status, -1 for a driver killed by a signal.
	Status int
	// Signal is the signal that killed the driver, "" when it exited.
	Signal string
	// Message and Subject come from the driver's JSON error; Subject names the tensor or
	// linear at fault when the driver knows it.
	Message string
	Subject string
	Stderr  string
}

// Error says how the driver ended and why, in the driver's words when it had any.
func (e *Error) Error() string {
	switch e.Signal {
	case "":
	case syscall.SIGKILL.String():
		return fmt.Sprintf("%s was killed (SIGKILL) before it finished: the kernel's out-of-memory killer does that when memory runs out", e.Script)
	default:
		return fmt.Sprintf("%s was stopped by a signal: %s", e.Script, e.Signal)
	}
	if e.Message != "" {
		return fmt.Sprintf("%s exited with status %d: %s", e.Script, e.Status, e.Message)
	}
	last := exceptionLine(e.Stderr)
	if m := missingModule.FindStringSubmatch(last); m != nil {
		return fmt.Sprintf("%s cannot run: python %s has no module %s: %s", e.Script, e.Python, m[1], PythonHint)
	}
	if last == "" {
		return fmt.Sprintf("%s exited with status %d and said nothing on stderr", e.Script, e.Status)
	}
	return fmt.Sprintf("%s exited with status %d: %s", e.Script, e.Status, last)
}

// missingModule is the exception a python without a module ends its traceback with.
var missingModule = regexp.MustCompile(`^(?:ModuleNotFoundError|ImportError): No module named '([^']+)'`)

// exceptionLine is what a failed driver said last on stderr: the exception a Python
// traceback ends with ("RuntimeError: …"), or the last line of anything else; never a
// line of the traceback's frames.
func exceptionLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(lines[i], " ") || strings.HasPrefix(l, "Traceback (most recent call last)") || strings.Trim(l, "^~ ") == "" {
			continue
		}
		return l
	}
	return ""
}

// Process is what the driver's process cost, for the export report's host section
// (peak_rss_convert_bytes) and the benchmarks. PeakRSSBytes is ru_maxrss, so it is never
// less than the calling process's own peak before the start (Linux carries the parent's
// high-water mark across exec): a floor of tens of MiB under a conversion's GiB.
type Process struct {
	PeakRSSBytes int64
	Seconds      float64
}

// Convert runs convert.py on plan.
func (r Runner) Convert(ctx context.Context, plan Convert) (ConvertResult, error) {
	var res ConvertResult
	if err := CheckCheckpointPath(plan.Output); err != nil {
		return res, err
	}
	err := os.MkdirAll(filepath.Dir(plan.Output), 0o755)
	if err != nil {
		return res, fmt.Errorf("create checkpoint folder for %s: %w", plan.Output, err)
	}
	res.Process, err = r.run(ctx, ConvertScript, plan, &res)
	return res, err
}

// GPTQ runs gptq.py on plan.
func (r Runner) GPTQ(ctx context.Context, plan GPTQ) (GPTQResult, error) {
	var res GPTQResult
	if err := plan.Validate(); err != nil {
		return res, err
	}
	var err error
	res.Process, err = r.run(ctx, GPTQScript, plan, &res)
	return res, err
}

// run feeds in as JSON on stdin and decodes stdout into out.
func (r Runner) run(ctx context.Context, script string, in, out any) (Process, error) {
	var proc Process
	path, cleanup, err := r.script(script)
	if err != nil {
		return proc, err
	}
	defer cleanup()
	body, err := json.Marshal(in)
	if err != nil {
		return proc, fmt.Errorf("encode %s plan: %w", script, err)
	}
	cmd := exec.CommandContext(ctx, r.Python, path)
	cmd.Stdin = bytes.NewReader(body)
	var stdout bytes.Buffer
	stderr := &tail{max: 8 << 10}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if r.Log != nil {
		cmd.Stderr = io.MultiWriter(stderr, r.Log)
	}
	cmd.WaitDelay = 5 * time.Second // a child that keeps stderr open cannot hold a cancelled run
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	cmd.Env = append(cmd.Env, r.Env...)
	start := time.Now()
	runErr := cmd.Run()
	proc.Seconds = time.Since(start).Seconds()
	if ru, ok := rusage(cmd); ok {
		proc.PeakRSSBytes = ru.Maxrss * 1024 // Linux reports kilobytes
	}
	if runErr != nil {
		return proc, r.driverError(ctx, script, runErr, stdout.Bytes(), stderr.String())
	}
	if err := json.Unmarshal(lastLine(stdout.Bytes()), out); err != nil {
		return proc, resultError(script, path, r.Dir != "", stdout.Bytes(), err)
	}
	return proc, nil
}

// resultError words a driver's result that does not decode: the driver and, when it stays
// on disk, its file; what its last line of output was, or which field is wrong.
func resultError(script, path string, kept bool, stdout []byte, err error) error {
	name := script
	if kept {
		name = path
	}
	var syn *json.SyntaxError
	switch last := string(lastLine(stdout)); {
	case len(bytes.TrimSpace(stdout)) == 0:
		return fmt.Errorf("%s finished without printing its JSON result: nothing came on stdout", name)
	case errors.As(err, &syn):
		return fmt.Errorf("%s finished without printing its JSON result: its last line of output is %.200q", name, last)
	default:
		return fmt.Errorf("%s printed a result this exe-expo cannot read: %s; is the driver from another exe-expo release?", name, fileutil.Reason(err))
	}
}

func rusage(cmd *exec.Cmd) (*syscall.Rusage, bool) {
	if cmd.ProcessState == nil {
		return nil, false
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru, ok && ru != nil
}

// driverError words a driver that did not finish: a python that could not be started, one
// stopped by the context, or one that exited non-zero (*Error).
func (r Runner) driverError(ctx context.Context, script string, runErr error, stdout []byte, stderr string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s stopped: %w", script, context.Cause(ctx))
	}
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) {
		return fmt.Errorf("python %s cannot be run to start %s (%s): %s", r.Python, script, fileutil.Reason(runErr), PythonHint)
	}
	e := &Error{Script: script, Python: r.Python, Status: exit.ExitCode(), Stderr: strings.TrimSpace(stderr)}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal().String()
	}
	var msg struct {
		Error  string  `json:"error"`
		Tensor *string `json:"tensor"`
		Linear *string `json:"linear"`
	}
	if json.Unmarshal(lastLine(stdout), &msg) == nil {
		e.Message = msg.Error
		for _, s := range []*string{msg.Tensor, msg.Linear} {
			if s != nil {
				e.Subject = *s
			}
		}
	}
	return e
}

// script returns the driver's path, writing it to r.Dir or a temporary folder.
func (r Runner) script(name string) (string, func(), error) {
	dir, cleanup := r.Dir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "exe-expo-drivers-")
		if err != nil {
			return "", nil, fmt.Errorf("temporary driver folder: %w", err)
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	if _, err := WriteScripts(dir); err != nil {
		cleanup()
		return "", nil, err
	}
	return filepath.Join(dir, name), cleanup, nil
}

// lastLine is the last non-empty line: drivers print one JSON object, but a library may
// print before it.
func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// tail keeps the last max bytes written, cut to whole lines.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
		if i := bytes.IndexByte(t.buf, '\n'); i >= 0 {
			t.buf = t.buf[i+1:]
		}
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.buf) }
