// Command generator renders .github/workflows and .github/actionlint.yaml from
// config/pipeline.yaml, config/versions.env and workflows-src/; with --check it changes
// nothing and fails with a unified diff when the committed files differ. Run it from the
// repository root: go run ./generator [--check].
package main

import (
	"flag"
	"fmt"
	"os"

	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // the backends this command offers
	"github.com/experimentalmachines/exe-expo/internal/workflow"
)

func main() {
	check := flag.Bool("check", false, "write nothing; print a unified diff and exit 2 when a committed file differs from the render")
	root := flag.String("root", ".", "repository root holding config/, workflows-src/ and .github/")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./generator [--check] [--root DIR]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "generator: takes no arguments, only flags (got %q)\n", flag.Args())
		os.Exit(2)
	}
	os.Exit(workflow.Generate(*root, *check, workflow.CLICommands, os.Stdout, os.Stderr))
}
