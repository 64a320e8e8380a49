package config

import (
	"fmt"
	"path"

	exeexpo "github.com/experimentalmachines/exe-expo"
)

// Default is the configuration committed in config/, embedded in the binary.
func Default() (*Config, error) {
	y, err := exeexpo.ConfigFS.ReadFile(path.Join("config", PipelineFile))
	if err != nil {
		return nil, fmt.Errorf("embedded config: %w", err)
	}
	v, err := exeexpo.ConfigFS.ReadFile(path.Join("config", VersionsFile))
	if err != nil {
		return nil, fmt.Errorf("embedded config: %w", err)
	}
	return Parse("config/"+PipelineFile, y, "config/"+VersionsFile, v)
}

// Load reads dir when it is given, else the embedded default.
func Load(dir string) (*Config, error) {
	if dir == "" {
		return Default()
	}
	return LoadDir(dir)
}
