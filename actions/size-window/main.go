// Command size-window is the step of the size-window action (actions/size-window/action.yml): it plans one model for one backend and writes the windows to build as the export matrix.
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
	code := action.SizeWindow(action.Main(ctx))
	stop()
	os.Exit(code)
}
