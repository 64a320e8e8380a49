package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/run"
)

// A recipe's tool run as the export command runs it: explicit environment, a timeout, the
// backend's stage rules (here two of export_llm's), and the typed errors mapped to exit codes.
func ExampleTool() {
	stages := []run.StageRule{
		{Stage: "load", AtStart: true},
		{Stage: "quantize", Start: regexp.MustCompile(`Checkpoint dtype: `)},
		{Stage: "export", Start: regexp.MustCompile(`(Re-e|E)xporting with:`)},
	}
	res, err := run.Tool(context.Background(), run.Spec{
		Name:        "export_llm",
		Argv:        []string{"/bin/sh", "-c", "echo 'Checkpoint dtype: torch.bfloat16'; echo 'Exporting with:'"},
		Env:         []string{"PYTHONUNBUFFERED=1"},
		Timeout:     time.Minute,
		Mode:        run.LogPrefixed,
		Output:      os.Stdout,
		SampleEvery: time.Second,
		Stages:      stages,
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
