// Package cli wires the exe-expo subcommands to the packages that do the work. Each command
// lives in its own file and registers itself, so commands can be added without touching a
// shared table.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit codes shared by every command and every action (DESIGN.md).
const (
	ExitOK          = 0
	ExitFailed      = 2
	ExitNotEligible = 3
	ExitSkipped     = 4
)

// Env is what a command may touch: its streams and the context that ends on Ctrl-C.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Command is one subcommand. Run returns the process exit code.
type Command struct {
	Name    string
	Summary string
	// Usage is the argument synopsis printed after the command name in --help.
	Usage string
	// Flags declares the command's flags on fs and returns the function that runs it with
	// the remaining positional arguments.
	Flags func(fs *flag.FlagSet) func(env Env, args []string) int
}

var commands = map[string]Command{}

// register adds a command; called from init functions in this package.
func register(c Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// Main runs the CLI with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fs := newFlagSet(c, stdout)
				c.Flags(fs)
				fs.Usage()
				return ExitOK
			}
		}
		usage(stdout)
		if len(args) == 0 {
			return ExitFailed
		}
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "exe-expo: unknown command %q\n\n", args[0])
		usage(stderr)
		return ExitFailed
	}
	fs := newFlagSet(c, stderr)
	run := c.Flags(fs)
	if err := fs.Parse(interleave(fs, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitFailed
	}
	return run(env, fs.Args())
}

func newFlagSet(c Command, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: exe-expo %s %s\n\n%s\n", c.Name, c.Usage, c.Summary)
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
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
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(flags, append([]string{"--"}, pos...)...)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "exe-expo exports small open-weight LLMs from Hugging Face to ExecuTorch .pte files.")
	fmt.Fprintln(w, "\nUsage: exe-expo <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'exe-expo help <command>' or 'exe-expo <command> --help' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 done, 2 failed, 3 not eligible (plan), 4 skipped (this host cannot build the window).")
}
