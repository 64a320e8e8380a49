package speed

import (
	"runtime"

	"github.com/experimentalmachines/exe-expo/internal/run"
)

// HostOf is the block's host: this process's architecture and the facts run reads, with
// the workflow's runner label when there is one.
func HostOf(f run.HostFacts, runner string) Host {
	return Host{Arch: runtime.GOARCH, CPUModel: f.CPUModel, NProc: f.NProc, Runner: runner, Note: HostNote}
}
