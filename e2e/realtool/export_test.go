package realtool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/solve"
	"github.com/experimentalmachines/exe-expo/internal/tinymodel"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// window is the smallest window the plan offers: the export's cost is the same at every
// window for a tiny model, and the KV cache is the only thing the window changes.
const window = "2048"

// exported is one real export's folders and report.
type exported struct {
	model, out, work string
	report           *report.Report
}

// export runs exe-expo export with the real toolchain and reads its report back. Each
// export is made once per package run for its options (extra flags included) and shared
// (under the package's folder): tests read it, and a test that writes into it (smoke, gate)
// works on a copy (copyExport).
func export(t *testing.T, backend, family, reply string, seed int, extra ...string) exported {
	t.Helper()
	// Skip (or fail, under EXE_EXPO_CI) here, not inside once.Do below: a skip there would
	// leave the once done with nothing in it, failing every later test that shares it.
	python(t)
	key := strings.Join(append([]string{backend, family, reply, fmt.Sprint(seed)}, extra...), "|")
	exportsMu.Lock()
	o, ok := exports[key]
	if !ok {
		o = &exportOnce{}
		exports[key] = o
	}
	exportsMu.Unlock()
	o.once.Do(func() {
		dir, err := os.MkdirTemp(root, "export-")
		if err != nil {
			o.err = err.Error()
			return
		}
		c := exportArgs(t, backend, family, reply, seed, append([]string{"--keep-work"}, extra...)...)
		c.out, c.dir = filepath.Join(dir, "out"), filepath.Join(dir, "work")
		c.args = withFolders(c.args, c.out, c.dir)
		start := time.Now()
		code, stdout, stderr := exeExpo(t, c.args...)
		if code != 0 {
			o.err = fmt.Sprintf("exe-expo %s: exit %d\n%s\n%s", strings.Join(c.args, " "), code, stdout, lastLines(stderr, 40))
			return
		}
		built(t, "export", key, start)
		o.e = readExport(t, c, backend, family, reply, seed)
	})
	require.Empty(t, o.err)
	require.NotNil(t, o.e.report, "the export %s failed in the test that made it (see its output)", key)
	return o.e
}

var (
	exportsMu sync.Mutex
	exports   = map[string]*exportOnce{}
)

type exportOnce struct {
	once sync.Once
	e    exported
	err  string
}

func readExport(t *testing.T, c exportCall, backend, family, reply string, seed int) exported {
	t.Helper()
	e := exported{model: tiny(t, family, reply, seed), out: c.out, work: c.dir}
	paths, err := report.Find(e.out, backend, "")
	require.NoError(t, err)
	require.Len(t, paths, 1, "one export report under %s", e.out)
	e.report, err = report.Read(paths[0])
	require.NoError(t, err)
	return e
}

// withFolders replaces the --out and --work values of an export's arguments.
func withFolders(args []string, out, work string) []string {
	args = append([]string{}, args...)
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--out":
			args[i+1] = out
		case "--work":
			args[i+1] = work
		}
	}
	return args
}

// copyExport is a copy of a shared export's out folder that a test may change.
func copyExport(t *testing.T, e exported) exported {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.CopyFS(dst, os.DirFS(e.out)))
	e.out = dst
	paths, err := report.Find(dst, e.report.Backend, "")
	require.NoError(t, err)
	require.Len(t, paths, 1)
	e.report, err = report.Read(paths[0])
	require.NoError(t, err)
	return e
}

// checkFile reads every exported file back with our own .pte reader and checks what the
// real export wrote against what the tiny model is.
func checkFile(t *testing.T, e exported, delegate string) {
	t.Helper()
	r := e.report
	require.NotEmpty(t, r.Files)
	for _, sc := range r.StructuralCheck {
		assert.True(t, sc.Passed, "structural check: %v", sc.Problems)
	}
	for _, f := range r.Files {
		path := filepath.Join(e.out, f.Path)
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, st.Size(), f.Bytes, "%s: the report's size", f.Path)
		p, err := pte.OpenFile(path)
		require.NoError(t, err, "our reader on the real %s", f.Path)
		fwd := p.Method("forward")
		require.NotNil(t, fwd, "%s has no forward method", f.Path)
		assert.Contains(t, fwd.Backends(), delegate)
		md := p.Metadata()
		assert.Equal(t, int64(384), md["get_vocab_size"], "get_vocab_size")
		assert.Equal(t, int64(2048), md["get_max_context_len"], "get_max_context_len")
	}
	est := r.Estimates
	t.Logf("size: %d bytes actual, %d estimated (%+.1f%%)", est.PTEBytesActual, est.PTEBytesEstimate,
		100*float64(est.PTEBytesActual-est.PTEBytesEstimate)/float64(est.PTEBytesEstimate))
	recordSize(t, t.Name(), est.PTEBytesActual, est.PTEBytesEstimate)
}

// TestExportXNNPACK exports every family's tiny model through the real export_llm (8da4w
// in groups of 32, int8 embeddings), or through optimum-executorch for the families
// export_llm cannot build (Gemma 3, SmolLM3), reads the file back with our reader, checks
// the checkpoint conversion numerically against transformers (export_llm's route; optimum's
// loads the folder itself), and runs the file through ExecuTorch's text LLM runner with
// exe-expo smoke.
func TestExportXNNPACK(t *testing.T) {
	t.Parallel()
	for _, f := range tinymodel.Families {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			e := copyExport(t, export(t, "xnnpack", f.Name, replyA, 1))
			checkFile(t, e, "XnnpackBackend")
			// Every linear runs in the XNNPACK delegate, none on CPU kernels (pte.Coverage).
			for _, sc := range e.report.StructuralCheck {
				require.NotEmpty(t, sc.Coverage, "the report records the delegate coverage")
				for _, c := range sc.Coverage {
					require.NotNil(t, c.LinearsInside, "%s: XNNPACK graphs are readable", c.Method)
					assert.Positive(t, *c.LinearsInside, "%s: linears in the delegate", c.Method)
					assert.Zero(t, c.LinearsOutside, "%s: linears on CPU kernels %v", c.Method, c.LinearOperatorsOutside)
				}
			}
			if e.report.Recipe["route"] == family.RouteOptimum {
				assert.NoFileExists(t, filepath.Join(e.work, "checkpoint", "consolidated.pth"), "optimum-executorch's route converts nothing")
			} else {
				checkConversion(t, e)
			}
			smokeRun(t, e)
			if gatedFamilies[f.Name] {
				gateBothWays(t, e, f.Name)
			}
		})
	}
}

// gatedFamilies are the families whose round-to-nearest file TestExportXNNPACK also grades
// with the decision gate. The gate's own path is TestSolveExportGate's (Qwen3, with GPTQ
// codes); a family new to the pipeline is graded here too, on the export already made,
// because a wrong RoPE or head split that the smoke reply survives would show in the
// gate's figures against its own fp32 model.
var gatedFamilies = map[string]bool{"phi4mini": true, "qwen3.5": true, "gemma3": true, "smollm3": true}

// gateBothWays grades an export against its own source's fp32 reference (made by the gate
// from the source, or for a family optimum-executorch builds by the solve, as the workflow
// makes it: graded and passed) and against another model's, taught another reply
// (otherModel: failed, and further from it by every fidelity figure).
func gateBothWays(t *testing.T, e exported, name string) {
	t.Helper()
	own := filepath.Join(t.TempDir(), "own-gate.json")
	if e.report.Recipe["route"] == family.RouteOptimum {
		own = solveReference(t, e, name)
	}
	mustExeExpo(t, "gate", e.out, "--source", e.model, "--reference", own, "--python", python(t))
	r := readReport(t, e)
	require.NotNil(t, r.Gate)
	assert.True(t, r.Gate.Passed, "gate against its own source: %v", r.Gate.Problems)
	assert.Positive(t, r.Gate.Graded, "rows graded")
	right := fidelity(t, r)
	t.Logf("gate against its own source: %.3f (fp32 %.3f) on %d rows; next token %.4f over %d positions, mean KL %.5f (max %.4f)",
		r.Gate.ExportMean, r.Gate.FP32Mean, r.Gate.Graded, right.NextTokenAgreement, right.Positions, right.MeanKL, right.MaxKL)

	other := otherModel(t)
	code, out, errOut := exeExpo(t, "gate", e.out, "--source", other, "--reference", filepath.Join(t.TempDir(), "other-gate.json"), "--python", python(t))
	assert.Equal(t, 2, code, "gate against another model's reference must fail\n%s\n%s", out, lastLines(errOut, 20))
	r = readReport(t, e)
	require.NotNil(t, r.Gate)
	assert.False(t, r.Gate.Passed, "gate against another model")
	wrong := fidelity(t, r)
	t.Logf("gate against another model: %.3f (fp32 %.3f) on %d rows; next token %.4f over %d positions, mean KL %.5f (max %.4f)",
		r.Gate.ExportMean, r.Gate.FP32Mean, r.Gate.Graded, wrong.NextTokenAgreement, wrong.Positions, wrong.MeanKL, wrong.MaxKL)
	assert.Less(t, wrong.NextTokenAgreement, right.NextTokenAgreement, "the file agrees less with another model than with its source")
	assert.Greater(t, wrong.MeanKL, right.MeanKL, "the file is further from another model than from its source")
}

// solveReference runs exe-expo solve on a model whose route takes no GPTQ codes: it must
// make the gate's fp32 reference alone, say why in solve.json, and write no codes, so the
// workflow's export job builds without them and its verify job still gates every file.
func solveReference(t *testing.T, e exported, name string) string {
	t.Helper()
	dir := solveOnce(t, name, replyA, 1) // e's model: TestExportXNNPACK exports replyA, seed 1
	assert.NoFileExists(t, filepath.Join(dir, "codes.pt"), "no codes for optimum-executorch's route")
	var solved solve.Result
	readJSON(t, filepath.Join(dir, "solve.json"), &solved)
	assert.Zero(t, solved.Linears)
	assert.Contains(t, solved.NoCodes, "exported by optimum-executorch, which takes none")
	assert.Equal(t, 2048, solved.GateFidelityPositions, "gate.json holds fp32 on the fidelity text")
	return filepath.Join(dir, "gate.json")
}

// TestExportVulkan exports through the real export_llm with the Vulkan partitioner, which
// runs on a CPU: Qwen3, and Phi-4-mini, whose partial rotary and LongRoPE tables are what
// the Vulkan delegate must take beside the other families' layers. The files cannot run
// here (no GPU runner), so they get the structural check and our reader.
func TestExportVulkan(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"qwen3", "phi4mini"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			e := export(t, "vulkan", family, replyA, 1)
			checkFile(t, e, "VulkanBackend")
		})
	}
}
