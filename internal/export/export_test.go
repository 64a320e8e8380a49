package export_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/run"
)

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

func modelDir(t *testing.T, id string) string { return exporttest.ModelDir(t, id) }

// host is the reference implementation's test host: 16.8 GB RAM and 24 GiB of swap
// (docs/research/sizing.md#runner-fleet-and-test-hosts).
func host(dir string) (run.HostFacts, error) {
	return run.HostFacts{NProc: 4, MemTotalBytes: 16_766_414_848, SwapTotalBytes: 25_769_803_776, CPUModel: "test CPU", DiskFreeBytes: 100e9, DiskPath: dir}, nil
}

func options(t *testing.T, id, backend, mode string, window int) export.Options {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	return export.Options{
		Config: cfg, Backend: backend, Model: modelDir(t, id), Window: window,
		Out: filepath.Join(root, "out"), Work: filepath.Join(root, "work"),
		Python: filepath.Join(standin, "python-"+mode), Host: host, SampleEvery: 50 * time.Millisecond,
		Timeout: time.Minute, RunURL: "https://github.com/o/r/actions/runs/1", RunID: "1",
	}
}

func TestXNNPACKExport(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 4096)
	res, err := export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if res.ReportPath != filepath.Join(o.Out, "xnnpack", "export-report-4k.json") {
		t.Errorf("report at %s", res.ReportPath)
	}
	if len(r.Files) != 1 || r.Files[0].Path != "xnnpack/Qwen3-1.7B-8da4w-kv8-4k.pte" {
		t.Fatalf("files = %+v", r.Files)
	}
	f, err := fileutil.Hash(filepath.Join(o.Out, "xnnpack", "Qwen3-1.7B-8da4w-kv8-4k.pte"))
	if err != nil || f.SHA256 != r.Files[0].SHA256 || f.Bytes != r.Files[0].Bytes || r.Estimates.PTEBytesActual != f.Bytes {
		t.Errorf("hash %+v vs report %+v (%v)", f, r.Files[0], err)
	}
	if v, _ := r.Metadata.Int("get_max_context_len"); v != 4096 {
		t.Errorf("metadata = %v", r.Metadata)
	}
	if eos, _ := r.Metadata.Ints("get_eos_ids"); fmt.Sprint(eos) != "[151645 151643]" {
		t.Errorf("eos = %v", eos)
	}
	// 4k keeps the int8 cache: the 4 GB class holds the window with it (1.94 GB) and not
	// with fp32 (2.64 GB), so the recipe builds what plan decided.
	if r.Window.Reason != "requested window 4096" || r.Window.KVBytesPerToken == nil || *r.Window.KVBytesPerToken != 59_584 || !r.Window.FitsPhoneBudget ||
		r.Recipe["kv_cache_dtype"] != "int8" || r.Window.ResidentByCache["fp32"] != 2_638_197_804 {
		t.Errorf("window = %+v", r.Window)
	}
	if r.Conversion == nil || r.Conversion.Tensors == 0 || !r.Conversion.TiedEmbeddings {
		t.Errorf("conversion = %+v", r.Conversion)
	}
	if r.Tokenizer != "tokenizer.json" || fmt.Sprint(r.Source.LicenseFiles) != "[LICENSE]" || r.Source.Family != "qwen3" {
		t.Errorf("side files: tokenizer %q licenses %v", r.Tokenizer, r.Source.LicenseFiles)
	}
	assert.Equal(t, report.License{License: "apache-2.0", LicenseLink: "https://huggingface.co/Qwen/Qwen3-1.7B/blob/main/LICENSE"}, r.Source.License,
		"the license of the folder's model card (README.md front matter)")
	var roots []report.File
	for _, p := range []string{"tokenizer.json", "LICENSE"} {
		d, err := fileutil.Hash(filepath.Join(o.Out, p))
		require.NoError(t, err)
		roots = append(roots, report.File{Path: p, Bytes: d.Bytes, SHA256: d.SHA256})
	}
	assert.ElementsMatch(t, roots, r.RootFiles, "the root files publish sends, hashed as copied")
	if pins := o.Config.Versions; r.Toolchain["executorch"] != pins.ExecuTorch || r.Toolchain["torch"] != pins.Torch {
		t.Errorf("toolchain = %v", r.Toolchain)
	}
	if r.Recipe["int4_codes"] != "round-to-nearest" || r.Host.CPUModel != "test CPU" || r.Run.ID != "1" || len(r.StructuralCheck) != 1 || !r.StructuralCheck[0].Passed {
		t.Errorf("report = %+v", r)
	}
	// the stand-in prints export_llm's "Checkpoint dtype:" line, which opens the quantize stage
	if len(r.Stages) != 1 || r.Stages[0].Tool != "export_llm" {
		t.Fatalf("stages = %+v", r.Stages)
	}
	if _, ok := r.Stages[0].Timings.Stage("quantize"); !ok {
		t.Errorf("no quantize stage in %s", r.Stages[0].Timings)
	}
	if _, err := os.Stat(o.Work); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work folder left behind: %v", err)
	}
	back, err := report.Read(res.ReportPath)
	if err != nil || back.Files[0].SHA256 != r.Files[0].SHA256 {
		t.Errorf("report on disk: %v", err)
	}
}

func TestWindowGate(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 0)
	res, err := export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// 16k keeps an int8 cache (xnnpack.int8_kv_cache_from 8192): 28 layers × 2 × 8 KV
	// heads × (128 + 5) bytes a token, which brings the window within the phone budget.
	w := res.Report.Window
	if w.Context != 16384 || w.Reason != "largest window this host can export: 16384" || !w.FitsPhoneBudget ||
		w.KVBytesPerToken == nil || *w.KVBytesPerToken != 59_584 || res.Report.Recipe["kv_cache_dtype"] != "int8" {
		t.Errorf("window = %+v", res.Report.Window)
	}
	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 32768)
	_, err = export.Run(context.Background(), o)
	var skip *export.SkipError
	if !errors.As(err, &skip) || export.ExitCode(err) != 4 || !strings.Contains(err.Error(), "causal masks alone") {
		t.Errorf("32k: %v", err)
	}
	if _, err := os.Stat(filepath.Join(o.Out, "xnnpack")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a skipped window wrote output")
	}
	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 0)
	o.Host = func(dir string) (run.HostFacts, error) {
		return run.HostFacts{MemTotalBytes: 8e9, DiskFreeBytes: 100e9, DiskPath: dir}, nil
	}
	if _, err := export.Run(context.Background(), o); !errors.As(err, &skip) || !strings.Contains(err.Error(), "no window fits: at 2048 tokens") {
		t.Errorf("small host: %v", err)
	}
	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
	o.Host = func(dir string) (run.HostFacts, error) {
		return run.HostFacts{MemTotalBytes: 64e9, DiskFreeBytes: 1e9, DiskPath: dir}, nil
	}
	if _, err := export.Run(context.Background(), o); !errors.As(err, &skip) || !strings.Contains(err.Error(), "of disk") {
		t.Errorf("small disk: %v", err)
	}
}

func TestToolFailures(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "fail", 2048)
	_, err := export.Run(context.Background(), o)
	var exit *run.ExitError
	if !errors.As(err, &exit) || exit.Status != 3 || export.ExitCode(err) != 2 || !strings.Contains(err.Error(), "standin failed on purpose") {
		t.Errorf("failing tool: %v", err)
	}
	if _, err := os.Stat(filepath.Join(o.Out, "xnnpack", "export-report-2k.json")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a failed export wrote a report")
	}

	// the stand-in sleeps an hour: only the timeout's kill ends it within the test, and the
	// error says so (no wall-clock bound to miss on a busy machine)
	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "sleep", 2048)
	o.Timeout = 2 * time.Second
	_, err = export.Run(context.Background(), o)
	var timeout *run.TimeoutError
	require.ErrorAs(t, err, &timeout)
	assert.Equal(t, 2, export.ExitCode(err))

	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "badmeta", 2048)
	if _, err := export.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "disagrees with the request") {
		t.Errorf("wrong metadata: %v", err)
	}

	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "oldet", 2048)
	if _, err := export.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "has executorch 1.3.1, and the runtime of the app (the openweights Android app, which loads these files) is ExecuTorch "+o.Config.Versions.ExecuTorch) {
		t.Errorf("old ExecuTorch: %v", err)
	}
	o = options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
	o.Python = "/usr/bin/true"
	if _, err := export.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "could not say which toolchain it has") {
		t.Errorf("python that answers nothing: %v", err)
	}

	o = options(t, "Qwen/Qwen3-8B", "xnnpack", "ok", 2048)
	if _, err := export.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "is not eligible") {
		t.Errorf("8B: %v", err)
	}
}

// TestMemoryHungryTool checks the sampler against what the child really allocated.
func TestMemoryHungryTool(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "hog-300", 2048)
	res, err := export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	h := res.Report.Host
	const mib = 1 << 20
	if h.PeakRSSExportBytes < 300*mib || h.PeakRSSExportBytes > 450*mib {
		t.Errorf("ru_maxrss = %d MiB, the child touched 300 MiB", h.PeakRSSExportBytes/mib)
	}
	if h.PeakRSSTreeBytes < 300*mib || h.PeakRSSTreeBytes > 450*mib || h.Samples == 0 {
		t.Errorf("sampled RSS peak = %d MiB over %d samples", h.PeakRSSTreeBytes/mib, h.Samples)
	}
}

func TestNPUAndVulkanExports(t *testing.T) {
	et := t.TempDir()
	os.MkdirAll(filepath.Join(et, "examples", "mediatek", "model_export_scripts"), 0o755)

	o := options(t, "Qwen/Qwen3-1.7B", "vulkan", "ok", 2048)
	res, err := export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Files[0].Path != "vulkan/Qwen3-1.7B-vulkan-8da4w-2k.pte" || !res.Report.StructuralCheck[0].Passed {
		t.Errorf("vulkan: %+v", res.Report.Files)
	}

	o = options(t, "Qwen/Qwen3-0.6B", "qnn", "ok", 4096)
	o.SoC, o.ExecuTorch, o.ID = "SM8750", et, "Qwen/Qwen3-0.6B"
	res, err = export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Files[0].Path != "qnn/sm8750/Qwen3-0.6B-qnn-hybrid-4k.pte" || r.TargetName != "Snapdragon 8 Elite" || r.Window.Reason != "forced with --context (static NPU graphs)" || r.Toolchain["qairt"] == "" {
		t.Errorf("qnn: %+v", r)
	}

	o = options(t, "Qwen/Qwen3-0.6B", "mediatek", "ok", 0)
	o.SoC, o.ExecuTorch, o.MTKPython = "MT6991", et, filepath.Join(standin, "python-ok")
	res, err = export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r = res.Report
	if len(r.Files) != 5 || r.Files[0].Path != "mtk/mt6991/Qwen3-0.6B-neuropilot-a16w8-512-chunk1of4.pte" ||
		r.Files[4].Path != "mtk/mt6991/Qwen3-0.6B-neuropilot-embedding-fp32.bin" || r.Files[4].Bytes != 151936*1024*4 {
		t.Errorf("mediatek files: %+v", r.Files)
	}
	if r.Window.Context != 512 || len(r.StructuralCheck) != 4 {
		t.Errorf("mediatek: window %+v, %d checks", r.Window, len(r.StructuralCheck))
	}
	o = options(t, "Qwen/Qwen3-0.6B", "qnn", "ok", 2048)
	if _, err := export.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "SoC is required") {
		t.Errorf("qnn without soc: %v", err)
	}
}

func TestGPTQCodesExport(t *testing.T) {
	o := options(t, "Qwen/Qwen3-1.7B", "xnnpack", "ok", 2048)
	o.Codes = filepath.Join(t.TempDir(), "codes.pt")
	os.WriteFile(o.Codes, []byte("codes"), 0o644)
	o.KeepWork = true
	res, err := export.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Files[0].Path != "xnnpack/Qwen3-1.7B-8da4w-gptq-2k.pte" || r.Recipe["int4_codes"] != "gptq" || r.Recipe["qmode"] != "8da4w-gptq" {
		t.Errorf("gptq export: %+v %v", r.Files, r.Recipe)
	}
	if _, err := os.Stat(filepath.Join(o.Work, "drivers", "export_with_codes.py")); err != nil {
		t.Errorf("the codes driver was not written for the tool: %v", err)
	}
}
