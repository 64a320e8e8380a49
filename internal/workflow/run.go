package workflow

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/cli"
)

// CLICommands reports whether the exe-expo CLI has a command, by asking it for the
// command's help as a user would.
func CLICommands(name string) bool {
	return cli.Main(context.Background(), []string{"help", name}, strings.NewReader(""), io.Discard, io.Discard) == cli.ExitOK
}

// Generate renders the repository at root and writes what changed; with check it writes
// nothing and instead prints a unified diff of every difference to out and fails. It
// returns the process exit code: 0 in sync or written, 2 out of sync or failed.
func Generate(root string, check bool, commands func(string) bool, out, errOut io.Writer) int {
	src, err := Load(root, commands)
	if err != nil {
		fmt.Fprintf(errOut, "generator: %v\n", err)
		return cli.ExitFailed
	}
	files, err := Render(src)
	if err != nil {
		fmt.Fprintf(errOut, "generator: %v\n", err)
		return cli.ExitFailed
	}
	changes, err := Compare(root, files)
	if err != nil {
		fmt.Fprintf(errOut, "generator: %v\n", err)
		return cli.ExitFailed
	}
	if check {
		return report(changes, out, errOut)
	}
	if err := Apply(root, changes); err != nil {
		fmt.Fprintf(errOut, "generator: %v\n", err)
		return cli.ExitFailed
	}
	for _, c := range changes {
		verb := "wrote"
		if c.New == nil {
			verb = "removed"
		}
		fmt.Fprintf(out, "%s %s\n", verb, c.Path)
	}
	return cli.ExitOK
}

// report prints the diff of every change and a sentence saying how to fix it.
func report(changes []Change, out, errOut io.Writer) int {
	if len(changes) == 0 {
		return cli.ExitOK
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
		io.WriteString(out, c.UnifiedDiff())
	}
	fmt.Fprintf(errOut, "generator: %s differ from what config/ and %s render: run `go run ./generator` and commit the result\n",
		strings.Join(paths, ", "), TemplateDir)
	return cli.ExitFailed
}
