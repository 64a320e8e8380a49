package realtool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/tinymodel"
)

// window is the smallest window the plan offers: the export's cost is the same at every
// window for a tiny model, and the KV cache is the only thing the window changes.
const window = "2048"

// exported is one real export's folders and report.
type exported struct {
	model, out, work string
	report           *report.Report
}

// export runs exe-expo export with the real toolchain and reads its report back.
func export(t *testing.T, backend, family, reply string, seed int, extra ...string) exported {
	t.Helper()
	c := exportArgs(t, backend, family, reply, seed, append([]string{"--keep-work"}, extra...)...)
	mustExeExpo(t, c.args...)
	e := exported{model: tiny(t, family, reply, seed), out: c.out, work: c.dir}
	paths, err := report.Find(e.out, backend, "")
	require.NoError(t, err)
	require.Len(t, paths, 1, "one export report under %s", e.out)
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
// in groups of 32, int8 embeddings), reads the file back with our reader, checks the
// checkpoint conversion numerically against transformers, and runs the file through
// ExecuTorch's text LLM runner with exe-expo smoke.
func TestExportXNNPACK(t *testing.T) {
	for _, f := range tinymodel.Families {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			e := export(t, "xnnpack", f.Name, replyA, 1)
			checkFile(t, e, "XnnpackBackend")
			checkConversion(t, e)
			smokeRun(t, e)
		})
	}
}

// TestExportVulkan exports one family through the real export_llm with the Vulkan
// partitioner, which runs on a CPU; the file cannot run here (no GPU runner), so it gets
// the structural check and our reader.
func TestExportVulkan(t *testing.T) {
	e := export(t, "vulkan", "qwen3", replyA, 1)
	checkFile(t, e, "VulkanBackend")
}
