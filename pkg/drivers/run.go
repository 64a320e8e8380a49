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
	"strings"
	"syscall"
	"time"
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
// its stderr for a traceback.
type Error struct {
	Script string
	Status int
	// Message and Subject come from the driver's JSON error; Subject names the tensor or
	// linear at fault when the driver knows it.
	Message string
	Subject string
	Stderr  string
}

// Error reports the status, the driver's own message and its last stderr lines.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s exited with status %d", e.Script, e.Status)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "\nstderr (last lines):\n%s", e.Stderr)
	}
	return b.String()
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
		return proc, driverError(script, runErr, stdout.Bytes(), stderr.String())
	}
	if err := json.Unmarshal(lastLine(stdout.Bytes()), out); err != nil {
		return proc, fmt.Errorf("%s printed no JSON result (%w); stdout: %.500s", script, err, stdout.String())
	}
	return proc, nil
}

func rusage(cmd *exec.Cmd) (*syscall.Rusage, bool) {
	if cmd.ProcessState == nil {
		return nil, false
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru, ok && ru != nil
}

func driverError(script string, runErr error, stdout []byte, stderr string) error {
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) {
		return fmt.Errorf("run %s: %w", script, runErr)
	}
	e := &Error{Script: script, Status: exit.ExitCode(), Stderr: strings.TrimSpace(stderr)}
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
