// Command gate is the step of the gate action (actions/gate/action.yml): it grades an export folder against its fp32 source on the decision gate.
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
	code := action.Gate(action.Main(ctx))
	stop()
	os.Exit(code)
}
