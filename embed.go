// Package exeexpo carries the files that the binary needs wherever it runs: the pipeline
// configuration. Code lives under pkg/; this package only embeds.
package exeexpo

import "embed"

// ConfigFS holds config/pipeline.yaml and config/versions.env as committed, so that a
// binary built from this repository plans with the same settings as the workflows.
//
//go:embed config/pipeline.yaml config/versions.env
var ConfigFS embed.FS
