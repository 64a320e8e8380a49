package run

import (
	"fmt"
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
	return head + tailText(e.Tail)
}

// TimeoutError reports a tool that ran past its Spec.Timeout; its whole process group was
// killed. It is distinct from ExitError so that a caller can tell "too slow" from "broken".
type TimeoutError struct {
	Tool    string
	Timeout time.Duration
	Tail    []string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s timed out after %s and was killed", e.Tool, e.Timeout) + tailText(e.Tail)
}

func tailText(tail []string) string {
	if len(tail) == 0 {
		return " (no output)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; last %d lines:", len(tail))
	for _, l := range tail {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String()
}
