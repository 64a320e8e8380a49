// Command exe-expo is the local CLI of the exe-expo pipeline: plan, inspect, export and the
// later stages. All logic lives in pkg/; this main only hands over the arguments.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/experimentalmachines/exe-expo/pkg/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
