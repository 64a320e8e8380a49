// Command publish is the step of the publish action (actions/publish/action.yml): it publishes an export folder to the model's Hugging Face repo.
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
	code := action.Publish(action.Main(ctx))
	stop()
	os.Exit(code)
}
