package action

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/setup"
)

// Step is the work of one action's step: what `exe-expo-action NAME [ARGS]` runs for the
// action in actions/NAME. ctx ends on SIGINT or SIGTERM; args are the words after the name.
type Step func(ctx context.Context, args []string) int

// steps are the steps of the actions in actions/, by the name of the action's folder. One
// main (cmd/exe-expo-action) runs them all, so the seven actions share one build, one
// signal handling and one exit path instead of seven copies of the same main.
var steps = map[string]Step{
	"size-window": command(SizeWindow),
	"export":      command(Export),
	"smoke":       command(Smoke),
	"gate":        command(Gate),
	"publish":     command(Publish),
	"watch":       command(Watch),
	// setup-export prepares the runner rather than running a CLI command; its one
	// argument, plan, says what the steps before the setup need (internal/setup.Action).
	"setup-export": func(ctx context.Context, args []string) int {
		return setup.Action(ctx, githubactions.New(), args, setup.HostEnv(os.Stdout))
	},
}

// command is the step of an action that stands for a CLI command: it takes its inputs
// from the environment and no arguments, so a stray word in action.yml fails the step
// instead of being ignored.
func command(f func(Env) int) Step {
	return func(ctx context.Context, args []string) int {
		e := Main(ctx)
		if len(args) > 0 {
			return e.fail("exe-expo-action", result.ExitFailed, "this step takes its inputs from INPUT_ variables and no arguments, not %q", strings.Join(args, " "))
		}
		return f(e)
	}
}

// StepNames are the names Dispatch knows, sorted: one per folder under actions/.
func StepNames() []string {
	names := make([]string, 0, len(steps))
	for n := range steps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Dispatch runs the step args[0] names with the rest of args and returns the exit code,
// for cmd/exe-expo-action. A missing or unknown name is an error annotation on out (the
// step's stdout, where the runner reads workflow commands) and exit 2, naming the steps
// there are.
func Dispatch(ctx context.Context, args []string, out io.Writer) int {
	if len(args) == 0 {
		return usage(out, "give the step to run as the first argument")
	}
	s, ok := steps[args[0]]
	if !ok {
		return usage(out, fmt.Sprintf("unknown step %q", args[0]))
	}
	return s(ctx, args[1:])
}

// usage annotates the step with what is wrong and the steps there are, and returns 2.
func usage(out io.Writer, what string) int {
	gh := githubactions.New(githubactions.WithWriter(out))
	gh.WithFieldsMap(map[string]string{"title": "exe-expo-action"}).Errorf("%s: one of %s (exe-expo-action STEP [ARGS])", what, strings.Join(StepNames(), ", "))
	return result.ExitFailed
}
