package fifthtest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // the four real backends, as the commands link them
	"github.com/experimentalmachines/exe-expo/internal/backend/fifthtest"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

// These tests link the commands' backends and npu5, fifthtest's made-up backend, by one
// import: each shows npu5 in one surface a real backend reaches, through that surface's
// public API, with no shared code naming it.

var standin string // folder holding python-<mode> links to the stand-in toolchain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "standin")
	if err != nil {
		panic(err)
	}
	if err := exporttest.BuildStandin(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	standin = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestFifthBackendIsRegistered: the import alone puts npu5 in the registry, by its rank,
// exportable and among the export_llm backends; it runs no solve.
func TestFifthBackendIsRegistered(t *testing.T) {
	assert.Equal(t, []string{"xnnpack", "vulkan", "qnn", "mediatek", "npu5", "enn"}, backend.Names(), "ordered by rank")
	assert.Contains(t, backend.NamesOf(backend.Exportable()), "npu5")
	assert.Contains(t, backend.LLMNames(), "npu5")
	assert.Equal(t, "xnnpack", backend.GPTQ().Name, "the solve's backend comes from the table")
	assert.Equal(t, []string{"Made-up NPU (test)"}, backend.Titles([]string{"npu5"}))
}

// exportOptions is an export of id to npu5 with the stand-in toolchain on the reference
// implementation's test host (16.8 GB RAM, 24 GiB swap).
func exportOptions(t *testing.T, id string, window int) export.Options {
	t.Helper()
	cfg, err := config.Default()
	require.NoError(t, err)
	root := t.TempDir()
	return export.Options{
		Config: cfg, Backend: fifthtest.Name, Model: exporttest.ModelDir(t, id), Window: window,
		Out: filepath.Join(root, "out"), Work: filepath.Join(root, "work"),
		Python: filepath.Join(standin, "python-ok"), SampleEvery: 50 * time.Millisecond, Timeout: time.Minute,
		Host: func(dir string) (run.HostFacts, error) {
			return run.HostFacts{NProc: 4, MemTotalBytes: 16_766_414_848, SwapTotalBytes: 25_769_803_776, CPUModel: "test CPU", DiskFreeBytes: 100e9, DiskPath: dir}, nil
		},
		RunURL: "https://github.com/o/r/actions/runs/1", RunID: "1",
	}
}

// TestFifthBackendExports: an export to npu5 runs its recipe (export_llm's, through the
// stand-in), reads back its file, checks it with npu5's own structural check, times the
// tool with its stage rules and writes its report in its folder.
func TestFifthBackendExports(t *testing.T) {
	o := exportOptions(t, "Qwen/Qwen3-0.6B", 2048)
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	r := res.Report
	assert.Equal(t, filepath.Join(o.Out, "npu5", "export-report-2k.json"), res.ReportPath)
	assert.Equal(t, "npu5", r.Backend)
	require.Len(t, r.Files, 1)
	assert.Equal(t, "npu5/Qwen3-0.6B-npu5-8da4w-2k.pte", r.Files[0].Path)
	assert.FileExists(t, filepath.Join(o.Out, filepath.FromSlash(r.Files[0].Path)))
	require.Len(t, r.StructuralCheck, 1)
	assert.True(t, r.StructuralCheck[0].Passed, "problems: %v", r.StructuralCheck[0].Problems)
	assert.Equal(t, "npu5", r.StructuralCheck[0].Backend, "its own check")
	assert.Equal(t, "requested window 2048", r.Window.Reason)
	assert.Equal(t, r.Source.TotalParams*fifthtest.BytesPerParam, r.Estimates.PTEBytesEstimate, "its own size model")
	require.Len(t, r.Stages, 1)
	_, ok := r.Stages[0].Timings.Stage("quantize")
	assert.True(t, ok, "export_llm's stage rules time its tool: %s", r.Stages[0].Timings)

	o = exportOptions(t, "Qwen/Qwen3-0.6B", 2048)
	o.Backend = "npu6"
	err = o.Validate()
	require.Error(t, err)
	assert.Equal(t, "Backend npu6 is not one of xnnpack, vulkan, qnn, mediatek, npu5", err.Error(), "the refusal lists it")
}

// TestFifthBackendInPlan: plan lists npu5 in rank order with its own title, recipe line,
// windows (its extra 3000 sorts in) and size model, and its refusal of LFM2.
func TestFifthBackendInPlan(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	p, src := planOf(t, cfg, "Qwen/Qwen3-1.7B")
	var names []string
	for _, b := range p.Backends {
		names = append(names, b.Backend)
	}
	assert.Equal(t, []string{"xnnpack", "vulkan", "qnn", "mediatek", "npu5", "enn"}, names, "ordered by rank")
	bp := p.Backends[4]
	require.True(t, bp.OK, "npu5 refused Qwen3: %s", bp.Reason)
	assert.Equal(t, fifthtest.Title, bp.Title)
	assert.Equal(t, "8da4w-g32, int8 embeddings on a made-up NPU", bp.Recipe)
	var windows []int
	for _, r := range bp.Rows {
		windows = append(windows, r.Window)
		assert.Equal(t, src.Params.Total*fifthtest.BytesPerParam, r.PTEBytes, "window %d: its own size model", r.Window)
		assert.NotEmpty(t, r.Runner+r.Skip, "window %d: a runner or why none", r.Window)
	}
	assert.Equal(t, []int{slices.Min(cfg.Export.ContextTiers), fifthtest.ExtraWindow}, windows[:2], "its extra window sorts in")
	assert.Len(t, bp.Rows, len(cfg.Export.ContextTiers)+1)
	assert.Contains(t, p.Verdict.Supported(), "npu5")

	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.Contains(t, text.String(), fifthtest.Title)

	lfm, _ := planOf(t, cfg, "LiquidAI/LFM2.5-1.2B-Base")
	assert.Equal(t, family.BackendVerdict{Backend: "npu5", Reason: fifthtest.Refusal}, lfm.Verdict.Backend("npu5"))
}
