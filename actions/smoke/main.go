// Command smoke is the step of the smoke action (actions/smoke/action.yml): it runs the checks before publish on an export folder.
// The work is in pkg/action, so this main only builds the step's environment and exits
// with the code it returns.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/experimentalmachines/exe-expo/pkg/action"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := action.Smoke(action.Main(ctx))
	stop()
	os.Exit(code)
}
