package cli

import (
	"fmt"
	"os"

	"github.com/experimentalmachines/exe-expo/pkg/export"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/source"
)

// offline is set by EXE_EXPO_OFFLINE=1: plan uses the snapshot without trying the Hub, and
// export refuses a Hub id at once; neither opens a connection.
func offline() bool { return os.Getenv("EXE_EXPO_OFFLINE") == "1" }

func hubSource(env Env) source.Hub {
	c := hub.New(hub.Options{UserAgent: "exe-expo"})
	return source.Hub{Client: c, Progress: func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "exe-expo: "+format+"\n", args...)
	}}
}

func init() {
	newHub = func(env Env) (source.HubReader, error) {
		if offline() {
			return nil, nil
		}
		return hubSource(env), nil
	}
	newFetcher = func(env Env) (export.Fetcher, error) {
		if offline() {
			return source.Offline{Why: "EXE_EXPO_OFFLINE=1"}, nil // nothing dials
		}
		return hubSource(env), nil
	}
}
