package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/config"
)

// version overrides the module version a release build reports, for builds whose module
// version is "(devel)" (go build in a checkout):
//
//	go build -ldflags "-X github.com/experimentalmachines/exe-expo/internal/cli.version=v1.2.0" ./cmd/exe-expo
var version string

func versionCommand() Command {
	return Command{
		Name:    "version",
		Summary: "print the exe-expo version, the commit it was built from and the ExecuTorch it targets",
		Flags: func(fs *flag.FlagSet) func(Env, []string) error {
			return func(env Env, args []string) error {
				if len(args) != 0 {
					return failf(ExitFailed, "version: takes no arguments, got %s", strings.Join(args, " "))
				}
				cfg, err := config.Default()
				if err != nil {
					return failf(ExitFailed, "version: %w", err)
				}
				info, _ := debug.ReadBuildInfo()
				if err := writeVersion(env.Stdout, info, version, cfg.Versions); err != nil {
					return failf(ExitFailed, "version: %w", err)
				}
				return nil
			}
		},
	}
}

// buildVersion is what the binary knows about its own build.
type buildVersion struct {
	Version, Commit, Time, Go string
	Modified                  bool
}

// readBuild takes the version from override, else from the module (a tagged go install),
// else "(devel)"; the commit and its time come from the VCS stamp go build records.
func readBuild(info *debug.BuildInfo, override string) buildVersion {
	b := buildVersion{Version: override}
	if info == nil {
		if b.Version == "" {
			b.Version = "(devel)"
		}
		return b
	}
	b.Go = info.GoVersion
	if b.Version == "" && info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// writeVersion prints the build and the pins it exports against, one fact a line.
func writeVersion(w io.Writer, info *debug.BuildInfo, override string, pins config.Versions) error {
	b := readBuild(info, override)
	commit := "commit unknown (built without version control information)"
	if b.Commit != "" {
		commit = "commit " + b.Commit
		if b.Time != "" {
			commit += " of " + b.Time
		}
		if b.Modified {
			commit += ", with uncommitted changes"
		}
	}
	_, err := fmt.Fprintf(w, "exe-expo %s\n%s\n", b.Version, commit)
	if err == nil && b.Go != "" {
		_, err = fmt.Fprintf(w, "built with %s\n", b.Go)
	}
	if err == nil {
		_, err = fmt.Fprintf(w, "ExecuTorch %s (commit %s), QAIRT %s, NeuroPilot SDK %s\n",
			pins.ExecuTorch, pins.ExecuTorchCommit, pins.QAIRT, pins.NeuroPilotSDKBuild)
	}
	return err
}
