package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/experimentalmachines/exe-expo/pkg/run"
)

// A recipe's tool run as the export command runs it: explicit environment, a timeout, the
// backend's stage rules, and the typed errors mapped to exit codes.
func ExampleTool() {
	res, err := run.Tool(context.Background(), run.Spec{
		Name:        "export_llm",
		Argv:        []string{"/bin/sh", "-c", "echo 'Checkpoint dtype: torch.bfloat16'; echo 'Exporting with:'"},
		Env:         []string{"PYTHONUNBUFFERED=1"},
		Timeout:     time.Minute,
		Mode:        run.LogPrefixed,
		Output:      os.Stdout,
		SampleEvery: time.Second,
		Stages:      run.StagesXNNPACK,
	})
	var timeout *run.TimeoutError
	switch {
	case errors.As(err, &timeout):
		fmt.Println("exit 2, too slow:", err)
	case err != nil: // *run.ExitError carries the status and the last lines
		fmt.Println("exit 2:", err)
	default:
		fmt.Println("status", res.ExitStatus, "stages", len(res.Timings.Stages), "sampled", res.Memory.Samples > 0)
	}
	// Output:
	// [export_llm] $ /bin/sh -c "echo 'Checkpoint dtype: torch.bfloat16'; echo 'Exporting with:'"
	// [export_llm] Checkpoint dtype: torch.bfloat16
	// [export_llm] Exporting with:
	// status 0 stages 4 sampled true
}
