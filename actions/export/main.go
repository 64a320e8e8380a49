// Command export is the step of the export action (actions/export/action.yml): it exports one model window (and chip) with exe-expo export.
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
	code := action.Export(action.Main(ctx))
	stop()
	os.Exit(code)
}
