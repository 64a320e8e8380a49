// Command setup-export is the setup-export action's main: it prepares the runner for an
// export (disk, swap, work folder, Python, vendor SDK, exe-expo). pkg/setup does the work;
// this only hands over the inputs and exits with its code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/experimentalmachines/exe-expo/pkg/setup"
	"github.com/sethvargo/go-githubactions"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := setup.Action(ctx, githubactions.New(), os.Args[1:], setup.HostEnv(os.Stdout))
	stop()
	os.Exit(code)
}
