// Package runtest writes a tool's output for tests of stage rules (run.Replay), as a short
// script: the backends' tests replay their tools' real lines with it. It is for tests only.
package runtest

import (
	"fmt"
	"strings"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/run"
)

// Script turns steps into the writes a tool makes: "p:<line>" prints a line, "r:<text>"
// redraws a progress bar ("\r" and the text, unterminated), "n" ends the line, and
// "s:<duration>" waits before the next write (and, last, before the tool exits).
func Script(steps ...string) ([]run.Write, error) {
	var out []run.Write
	var wait time.Duration
	for _, step := range steps {
		op, arg, _ := strings.Cut(step, ":")
		var data string
		switch op {
		case "p":
			data = arg + "\n"
		case "r":
			data = "\r" + arg
		case "n":
			data = "\n"
		case "s":
			d, err := time.ParseDuration(arg)
			if err != nil {
				return nil, fmt.Errorf("step %q: %w", step, err)
			}
			wait += d
			continue
		default:
			return nil, fmt.Errorf("unknown step %q", step)
		}
		out = append(out, run.Write{After: wait, Data: data})
		wait = 0
	}
	return append(out, run.Write{After: wait}), nil
}
