// Package exeexpo carries the files that the binary needs wherever it runs: the pipeline
// configuration and the export environment's lock files. Code lives under pkg/; this
// package only embeds.
package exeexpo

import "embed"

// ConfigFS holds config/pipeline.yaml and config/versions.env as committed, so that a
// binary built from this repository plans with the same settings as the workflows, the
// gate's fidelity text pipeline.yaml names (gate.fidelity_text), and the facts about the
// pinned ExecuTorch release its refusals are worded from (config/runtime-facts.yaml).
//
//go:embed config/pipeline.yaml config/versions.env config/fidelity-text.txt config/runtime-facts.yaml
var ConfigFS embed.FS

// PythonFS holds python/export.lock, python/mtk-py310.lock (python/lock.sh makes them) and
// the transformers overlay's python/overlay.lock, so that setup-export installs on a runner
// exactly what CI tested.
//
//go:embed python/export.lock python/mtk-py310.lock python/overlay.lock
var PythonFS embed.FS
