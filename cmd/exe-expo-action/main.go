// Command exe-expo-action is the one main of the actions in actions/: each action.yml builds
// it and runs `exe-expo-action NAME [ARGS]`, NAME being the action's folder (size-window,
// setup-export, export, smoke, gate, publish, watch). The steps are in internal/action's table,
// so this main only cancels the context on a signal and exits with the step's code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/experimentalmachines/exe-expo/internal/action"
	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // the backends this command offers
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := action.Dispatch(ctx, os.Args[1:], os.Stdout)
	stop()
	os.Exit(code)
}
