// Command exe-expo is the local CLI of the exe-expo pipeline: plan, inspect, export and the
// later stages. All logic lives in pkg/; this main only hands over the arguments.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // the backends this command offers
	"github.com/experimentalmachines/exe-expo/internal/cli"
)

// main cancels the command's context on the first SIGINT or SIGTERM, so that the command
// stops its requests and tools and removes what it had half-written (exit 130); a second
// signal finds the default handling back and ends the process at once.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
