// Command watch is the step of the watch action (actions/watch/action.yml): it runs one pass of the Hugging Face watcher.
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
	code := action.Watch(action.Main(ctx))
	stop()
	os.Exit(code)
}
