package cli

import (
	"fmt"
	"os"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
)

// offline is set by EXE_EXPO_OFFLINE=1: plan uses the snapshot without trying the Hub, and
// export refuses a Hub id at once; neither opens a connection.
func offline() bool { return os.Getenv("EXE_EXPO_OFFLINE") == "1" }

// withHub sets env's Hub client and Fetcher where they are unset: the real Hub, with one
// progress line per downloaded file on Stderr.
func withHub(env Env) Env {
	if env.Hub == nil {
		env.Hub = hub.New(hub.Options{UserAgent: "exe-expo"})
	}
	if env.Fetcher == nil {
		stderr := env.Stderr
		env.Fetcher = source.Hub{Client: env.Hub, Progress: func(format string, args ...any) {
			fmt.Fprintf(stderr, "exe-expo: "+format+"\n", args...)
		}}
	}
	return env
}

// hubReader is what plan reads Hub models with; none under EXE_EXPO_OFFLINE=1, so that the
// plan comes from the snapshot without a dial.
func (env Env) hubReader() source.HubReader {
	if offline() {
		return nil
	}
	return env.Fetcher
}

// fetcher is what export, solve and gate download Hub models with; under
// EXE_EXPO_OFFLINE=1 one that refuses every Hub id, without a dial.
func (env Env) fetcher() export.Fetcher {
	if offline() {
		return source.Offline{Why: "EXE_EXPO_OFFLINE=1"} // nothing dials
	}
	return env.Fetcher
}
