package verify

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/speed"
)

// SpeedRun measures how fast a report's file runs (internal/speed) and records it in the
// report. The smoke command runs it after the smoke run; the speed command runs it where the
// file was built (the workflows' export job, on ARM, whose kernels are the phone's).
type SpeedRun struct {
	// Text is what the prompts are cut from (gate.fidelity_text).
	Text string
	Host speed.Host
	// RefuseSlowPath is speed.refuse_slow_path: a slow path then blocks publishing.
	RefuseSlowPath bool
	// Again measures a report that already has a speed block; without it a block measured
	// before with figures (the export job's, on ARM) is kept, so the x86 smoke run does not
	// replace it.
	Again bool
}

// Measure records the speed block of the report at path, read as rep, whose file paths are
// relative to out. A backend the host's runner cannot run, a file whose smoke run failed,
// and a block already measured (without Again) are left as they are; a block whose runner
// failed to load the file is measured again here, on this host, which the block names.
func (s SpeedRun) Measure(ctx context.Context, r drivers.Runner, out, path string, rep *report.Report) error {
	b, err := spec(rep)
	kept := rep.Speed != nil && rep.Speed.RunnerError == "" && !s.Again
	if err != nil || !b.Smoke || rep.Smoke != nil && !rep.Smoke.Passed || kept {
		return err
	}
	file, err := onePTE(rep)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if rep.Tokenizer == "" {
		return fmt.Errorf("%s names no tokenizer for the runner", path)
	}
	pte := filepath.Join(out, filepath.FromSlash(file))
	chunk, _ := rep.Metadata.Int("get_max_seq_len")
	prompts, skipped := speed.Prompts(rep.Window.Context, int(chunk))
	var got speed.Output
	if len(prompts) > 0 {
		if got, _, err = r.Speed(ctx, drivers.NewSpeedRun(pte, filepath.Join(out, rep.Tokenizer), s.Text, prompts)); err != nil {
			return fmt.Errorf("speed run of %s: %w", file, err)
		}
	}
	res := speed.FromOutput(got, s.Host, speed.ReadFile(pte), skipped)
	res.BlocksPublish = s.RefuseSlowPath && res.Refusable()
	rep.Speed = &res
	return report.Write(path, rep)
}
