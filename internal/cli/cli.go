// Package cli wires the exe-expo subcommands to the packages that do the work: each command
// maps its flags onto a library's options (export.Run, solve.Run, audit.Run, …) and prints
// the outcome. Each command lives in its own file, and commandList names them all, so one
// place says what the CLI offers.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// Exit codes shared by every command and every action (README.md#commands), defined once
// in internal/result, whose results carry them: 4 keeps the reference implementation's meaning
// of a skipped window (docs/research/reference.md#exit-codes-and-skipped-windows), and
// ExitInterrupted is a command stopped by SIGINT or SIGTERM (128 + SIGINT, what a shell
// reports for Ctrl-C), so a script can tell a stop it asked for from a failure.
const (
	ExitOK          = result.ExitOK
	ExitFailed      = result.ExitFailed
	ExitNotEligible = result.ExitNotEligible
	ExitSkipped     = result.ExitSkipped
	ExitInterrupted = result.ExitInterrupted
)

// Env is what a command may touch: its streams, the context that ends on Ctrl-C, and the
// Hub. The Hub comes through Env rather than package variables so that a test sets a
// stand-in on the Env it runs, and no command builds a client of its own.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Hub is the Hugging Face client of catalog, publish, watch and audit. Main makes it
	// from HF_ENDPOINT and HF_TOKEN when it is nil.
	Hub *hub.Client
	// Fetcher reads Hub models: plan their metadata and files by range, export, solve,
	// gate and audit their downloads. Main makes it over Hub, with download progress on
	// Stderr, when it is nil; EXE_EXPO_OFFLINE=1 keeps plan, export, solve and gate off it.
	Fetcher export.Fetcher
	// res is the command's outcome, written to --result FILE when asked; nil outside Main.
	res *result.Result
}

// Failure is how a command ends other than in success: the exit code, and the error whose
// sentence says why. Commands return it rather than print it so that Main is the one place
// that decides what the user reads on stderr and what the --result file records, and says
// each once. A verdict that is no fault, such as plan's exit 3 for a model not eligible or
// export's exit 4 for a skipped window, is a Failure too, with its own code. A Failure
// without Err ends quietly, for a verdict the command's output already gave (audit's
// refused gate).
type Failure struct {
	Code int
	Err  error
}

// Error is the sentence Main prints and records.
func (f *Failure) Error() string {
	if f.Err == nil {
		return fmt.Sprintf("exit code %d", f.Code)
	}
	return f.Err.Error()
}

// Unwrap gives the error the Failure words, for errors.Is and errors.As.
func (f *Failure) Unwrap() error { return f.Err }

// failf is the Failure with code whose sentence is fmt.Errorf(format, args...).
func failf(code int, format string, args ...any) error {
	return &Failure{Code: code, Err: fmt.Errorf(format, args...)}
}

// end is how the command that returned err ends: it prints err's sentence on stderr,
// records it as the result's reason and returns the exit code, ExitOK for nil and
// ExitFailed for an error that is no Failure. It is the one place a command's end is
// printed and recorded, so the log and the result never say different things.
func (env Env) end(err error) int {
	if err == nil {
		return ExitOK
	}
	var f *Failure
	if !errors.As(err, &f) {
		f = &Failure{Code: ExitFailed, Err: err}
	}
	if f.Err == nil {
		return f.Code
	}
	msg := err.Error()
	fmt.Fprintln(env.Stderr, msg)
	if env.res != nil {
		env.res.Reason = msg
	}
	return f.Code
}

// outputs is where a command records what it made; a throwaway outside Main.
func (env Env) outputs() *result.Outputs {
	if env.res == nil {
		return &result.Outputs{}
	}
	return &env.res.Outputs
}

// Command is one subcommand.
type Command struct {
	Name    string
	Summary string
	// Usage is the argument synopsis printed after the command name in --help.
	Usage string
	// Flags declares the command's flags on fs and returns the function that runs it with
	// the remaining positional arguments. That function returns nil for success and a
	// *Failure (or any error, for exit 2) otherwise, without printing it: Main does.
	Flags func(fs *flag.FlagSet) func(env Env, args []string) error
}

// commandList is every command the CLI offers, in the order help lists them: one place
// to read what exe-expo does, rather than registrations spread over the files' init
// functions.
func commandList() []Command {
	return []Command{
		appviewCommand(),
		auditCommand(),
		catalogCommand(),
		costsCommand(),
		exportCommand(),
		gateCommand(),
		handoffCommand(),
		inspectCommand(),
		planCommand(),
		publishCommand(),
		smokeCommand(),
		solveCommand(),
		speedCommand(),
		versionCommand(),
		watchCommand(),
	}
}

// commands finds a command of commandList by name.
var commands = byName(commandList())

func byName(list []Command) map[string]Command {
	m := make(map[string]Command, len(list))
	for _, c := range list {
		if _, dup := m[c.Name]; dup {
			panic("cli: command listed twice: " + c.Name)
		}
		m[c.Name] = c
	}
	return m
}

// Main runs the CLI with args (without the program name) and returns the exit code. What
// the user asked for (help, a version) goes to stdout with exit 0; a mistake (no command,
// an unknown one, a bad flag) goes to stderr with exit 2, so scripts can tell them apart.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr}, args)
}

// mainWith is Main on env, whose Hub and Fetcher a test may set; Main sets what is unset.
func mainWith(env Env, args []string) int {
	env = withHub(env)
	if len(args) == 0 {
		usage(env.Stderr)
		return ExitFailed
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(env, args[1:])
	}
	c, ok := commands[args[0]]
	if !ok {
		return unknownCommand(env, args[0])
	}
	env.res = result.New(c.Name)
	fs := newFlagSet(c, io.Discard)
	run := c.Flags(fs)
	resultPath := resultFlag(fs)
	if err := fs.Parse(interleave(fs, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, c, env.Stdout)
			return ExitOK
		}
		// The parse stopped at the mistake, maybe before --result: look for it in the words.
		return finish(env, resultArg(args[1:]), env.end(failf(ExitFailed, "exe-expo %s: %s", c.Name, flagMistake(fs, err))))
	}
	return finish(env, *resultPath, interrupted(env, c.Name, env.end(run(env, fs.Args()))))
}

// resultArg is the value of --result among args, for a command line the flag package
// could not parse.
func resultArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "result" {
			continue
		}
		if hasValue {
			return value
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// resultFlag declares --result, which every command takes.
func resultFlag(fs *flag.FlagSet) *string {
	return fs.String("result", "", "also write the outcome as JSON to this file: exit code, reason, files, windows, skipped windows, repo (docs/results.md)")
}

// finish records code in the result and writes it to path when one was asked for. A result
// that cannot be written fails the command: its caller reads it.
func finish(env Env, path string, code int) int {
	env.res.Finish(code)
	if path == "" {
		return code
	}
	if err := result.Write(path, env.res); err != nil {
		return env.end(failf(ExitFailed, "exe-expo %s: %w", env.res.Command, err))
	}
	return code
}

// interrupted turns the failure of a command whose context ended (Ctrl-C, SIGTERM) into
// ExitInterrupted and says so, after the command's own sentence. A command that finished
// despite the signal keeps its code: its work is done, or its verdict (not eligible,
// skipped) stands.
func interrupted(env Env, name string, code int) int {
	if code != ExitFailed || env.Ctx == nil || env.Ctx.Err() == nil {
		return code
	}
	return env.end(failf(ExitInterrupted, "exe-expo: %s stopped: %w", name, context.Cause(env.Ctx)))
}

// help answers `exe-expo help [COMMAND]` on stdout.
func help(env Env, args []string) int {
	switch len(args) {
	case 0:
		usage(env.Stdout)
		return ExitOK
	case 1:
	default:
		fmt.Fprintf(env.Stderr, "exe-expo: help takes one command name, not %d words\n\n", len(args))
		usage(env.Stderr)
		return ExitFailed
	}
	c, ok := commands[args[0]]
	if !ok {
		return unknownCommand(env, args[0])
	}
	fs := newFlagSet(c, env.Stdout)
	c.Flags(fs)
	resultFlag(fs)
	printUsage(fs, c, env.Stdout)
	return ExitOK
}

func unknownCommand(env Env, name string) int {
	fmt.Fprintf(env.Stderr, "exe-expo: unknown command %q\n\n", name)
	usage(env.Stderr)
	return ExitFailed
}

// newFlagSet returns the command's flag set writing parse errors to errOut. Its Usage does
// nothing: Main prints the usage itself, to stdout for --help and to stderr after an error,
// which the flag package cannot tell apart.
func newFlagSet(c Command, errOut io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {}
	return fs
}

// printUsage writes a command's synopsis, summary and flags to w.
func printUsage(fs *flag.FlagSet, c Command, w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", strings.TrimSpace("exe-expo "+c.Name+" "+c.Usage), c.Summary)
	var any bool
	fs.VisitAll(func(*flag.Flag) { any = true })
	if any {
		fmt.Fprintln(w, "\nFlags:")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
}

// interleave moves flags that follow positional arguments in front of them, so that
// `exe-expo plan Qwen/Qwen3-1.7B --json` works as users type it.
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 == len(args) {
			// The last word is a flag missing its value: parse the flags alone, so the flag
			// package says so instead of taking the "--" below as the value.
			return flags
		}
		flags = append(flags, args[i+1])
		i++
	}
	return append(flags, append([]string{"--"}, pos...)...)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "exe-expo exports small open-weight LLMs from Hugging Face to ExecuTorch .pte files.")
	fmt.Fprintln(w, "\nUsage: exe-expo <command> [flags] [arguments]\n\nCommands:")
	for _, c := range commandList() {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nRun 'exe-expo help <command>' or 'exe-expo <command> --help' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 done, 2 failed, 3 not eligible (plan), 4 skipped (this host cannot build the window), 130 interrupted.")
}
