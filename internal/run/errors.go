package run

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ExitError reports a tool that ended unsuccessfully on its own (or was killed by a signal
// it did not get from Tool, such as the kernel's OOM killer). Callers map it to exit 2.
type ExitError struct {
	Tool string
	// Status is the exit status; for a signal it is 128 + the signal number, as a shell
	// reports it.
	Status int
	// Signal names the signal that ended the tool, or is empty.
	Signal string
	// Tail holds the tool's last lines, oldest first.
	Tail []string
}

func (e *ExitError) Error() string {
	head := fmt.Sprintf("%s exited with status %d", e.Tool, e.Status)
	if e.Signal != "" {
		head = fmt.Sprintf("%s was killed by signal %s (status %d)", e.Tool, e.Signal, e.Status)
	}
	return head + cause(e.Tail)
}

// TimeoutError reports a tool that ran past its Spec.Timeout; its whole process group was
// killed. It is distinct from ExitError so that a caller can tell "too slow" from "broken".
type TimeoutError struct {
	Tool    string
	Timeout time.Duration
	Tail    []string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s timed out after %s and was killed", e.Tool, e.Timeout) + cause(e.Tail)
}

// exceptionLine matches the line a Python traceback ends with ("KeyError: 'x'",
// "omegaconf.errors.ConfigKeyError: Key 'groupsize' not in 'QuantizationConfig'").
var exceptionLine = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failure)\b(: .*)?$`)

// cause is what the message says about why the tool stopped: the exception a Python
// traceback ends with, else its last line of output. The traceback itself, and the lines
// before, stay in the log the tool streamed to (Spec.Log) and in Tail, never in the
// sentence a user reads first.
func cause(tail []string) string {
	if len(tail) == 0 {
		return " (no output)"
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); exceptionLine.MatchString(l) {
			return ": " + l
		}
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); l != "" {
			return fmt.Sprintf("; its last line of output was %q (the lines before it are in the log)", l)
		}
	}
	return " (no output)"
}
