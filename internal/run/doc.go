// Package run starts the export toolchain (export_llm, Qualcomm's llama.py, MediaTek's export
// scripts, the embedded Python drivers) as child processes and records what each run cost, so
// that every export report can say how much memory the host really used and where the time
// went.
//
// One call, Tool, does the whole job: the tool runs in its own process group with an explicit
// environment; its stdout and stderr are streamed line by line (inside a ::group:: block on
// GitHub Actions, prefixed with "[name] " elsewhere); a timeout or a cancelled context kills the
// whole group; a Sampler records memory in use, swap in use, the cgroup peak and the RSS of
// the process group every few seconds; and StageRules turn known log lines into stage timings
// (calibration, HTP compile, NeuroPilot lowering, export_llm's phases).
//
// Host describes the machine (CPU model, cores, RAM, swap, free disk) for the same report.
//
// The package is for Linux hosts, as the runners are: it reads /proc and the cgroup files.
package run
