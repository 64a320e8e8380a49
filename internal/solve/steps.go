package solve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/internal/calib"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// calibrate runs the fp32 model over the calibration rows and writes the solve's rows file
// into the work folder.
func calibrate(ctx context.Context, log io.Writer, r drivers.Runner, ck *export.Checkpoint, cfg *config.Config, prompt gate.Prompt) (calib.Set, string, error) {
	plan := calib.Plan(cfg.Calibration, cfg.Gate.Trailer)
	fmt.Fprintf(log, "exe-expo: continuing %d calibration rows with %s's fp32 replies\n", len(plan), ck.Source.ID)
	replies, _, err := r.CalibRows(ctx, drivers.CalibRows{Model: ck.Dir, Prompt: prompt, Rows: plan})
	if err != nil {
		return calib.Set{}, "", fmt.Errorf("calibration rows of %s: %w", ck.Source.ID, err)
	}
	set, err := calib.Assemble(plan, replies, cfg.Calibration.PromptLimit)
	if err != nil {
		return calib.Set{}, "", fmt.Errorf("calibration rows of %s: %w", ck.Source.ID, err)
	}
	b, err := json.Marshal(set.Rows)
	if err != nil {
		return calib.Set{}, "", fmt.Errorf("encode the calibration rows: %w", err)
	}
	path := filepath.Join(ck.Work, "calibration-rows.json")
	return set, path, report.WriteAtomic(path, b)
}

// solveCodes runs the whole-model solve on the rows file into codes (absolute), on the
// grid the export_llm recipes quantize with.
func solveCodes(ctx context.Context, log io.Writer, r drivers.Runner, ck *export.Checkpoint, cfg *config.Config, rows, codes string) (drivers.SolveModelResult, error) {
	blocks, err := drivers.PlanBlocks(int(ck.Arch.Layers), ck.Arch.LayerTypes)
	if err != nil {
		return drivers.SolveModelResult{}, err
	}
	grid := drivers.DefaultGrid()
	grid.Damp, grid.GroupSize = cfg.Export.Solve.Damp, cfg.Export.XNNPACK.GroupSize
	fmt.Fprintf(log, "exe-expo: solving %d blocks of %s\n", len(blocks), ck.Source.ID)
	res, err := r.SolveModel(ctx, drivers.SolveModel{Out: codes, Rows: rows, Grid: grid, Blocks: blocks,
		Model: drivers.EagerModel{ModelClass: ck.ModelClass, Params: ck.Params, Checkpoint: ck.Checkpoint,
			MaxSeqLength: calib.MaxSeqLength, LFM2StateFix: ck.LFM2}})
	if err != nil {
		return res, fmt.Errorf("GPTQ solve of %s: %w", ck.Source.ID, err)
	}
	return res, nil
}
