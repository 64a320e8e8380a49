package cli

import (
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/export/exporttest"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
	"github.com/experimentalmachines/exe-expo/pkg/report"
)

// standinBin builds the stand-in toolchain into a fresh folder (python-<mode> links).
func standinBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	require.NoError(t, exporttest.BuildStandin(bin))
	return bin
}

// hugeWindowConfig is the committed configuration with a 131,072-token window added: no
// host builds that window of Llama 3.2 1B (its causal masks alone are 275 GB), so an
// export of it is skipped on any machine the tests run on.
func hugeWindowConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	y, err := os.ReadFile(filepath.Join("..", "..", "config", "pipeline.yaml"))
	require.NoError(t, err)
	const tiers = "context_tiers: [32768, 16384, 8192, 4096, 2048]"
	require.Contains(t, string(y), tiers)
	y = []byte(strings.Replace(string(y), tiers, "context_tiers: [131072, 32768, 16384, 8192, 4096, 2048]", 1))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pipeline.yaml"), y, 0o644))
	v, err := os.ReadFile(filepath.Join("..", "..", "config", "versions.env"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "versions.env"), v, 0o644))
	return dir
}

// TestExportCommand runs the export through the CLI with the stand-in toolchain and
// checks what a workflow step sees: stdout JSON, stderr sentences and the exit codes.
func TestExportCommand(t *testing.T) {
	bin := standinBin(t)
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	root := t.TempDir()
	args := func(mode string, extra ...string) []string {
		return append([]string{"export", "--backend", "xnnpack", model, "--out", filepath.Join(root, "out-"+mode),
			"--work", filepath.Join(root, "work-"+mode), "--python", filepath.Join(bin, "python-"+mode)}, extra...)
	}
	code, out, errs := run(t, args("ok", "--context", "2048")...)
	require.Equal(t, ExitOK, code, errs)
	var res struct {
		Files  []string
		Window int
		Report string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, 2048, res.Window)
	assert.Equal(t, []string{"xnnpack/Qwen3-0.6B-8da4w-2k.pte"}, res.Files)
	rep, err := report.Read(res.Report)
	require.NoError(t, err)
	require.Len(t, rep.StructuralCheck, 1)
	assert.True(t, rep.StructuralCheck[0].Passed)
	assert.Contains(t, errs, "[export_llm] Lowering to xnnpack", "tool log not streamed with its prefix")

	code, _, errs = run(t, args("fail", "--context", "2048")...)
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "export failed:")
	assert.Contains(t, errs, "exited with status 3")
	assert.NoDirExists(t, filepath.Join(root, "work-fail"), "a failed export removes the work folder it created")

	// no machine builds 128k of Llama 3.2 1B: exit 4, the reason on stderr
	llama := exporttest.ModelDir(t, "meta-llama/Llama-3.2-1B-Instruct")
	code, _, errs = run(t, "export", "--config", hugeWindowConfig(t), "--backend", "xnnpack", llama, "--context", "131072",
		"--out", root+"/o4", "--work", root+"/w4", "--python", filepath.Join(bin, "python-ok"))
	assert.Equal(t, ExitSkipped, code, errs)
	assert.Contains(t, errs, "export skipped:")
	assert.Contains(t, errs, "causal masks alone")
	assert.NoDirExists(t, root+"/w4", "a skipped export removes the work folder it created")
}

// TestExportRefusesInput: every refused flag is exit 2 with one line naming the flag,
// before anything is created.
func TestExportRefusesInput(t *testing.T) {
	bin := standinBin(t)
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{"no backend", []string{model}, "export: --backend is required: one of xnnpack, vulkan, qnn, mediatek\n"},
		{"negative window", []string{"--backend", "xnnpack", model, "--context", "-1"}, "export: --context -1 is negative"},
		{"window that is no tier", []string{"--backend", "xnnpack", model, "--context", "1000000"}, "export: --context 1000000 is not a configured window for xnnpack"},
		{"soc with xnnpack", []string{"--backend", "xnnpack", model, "--soc", "SM8750"}, "export: --soc SM8750 does not apply to xnnpack"},
		{"qnn without soc", []string{"--backend", "qnn", model}, "export: --soc is required for qnn: one of SM8750, SM8650"},
		{"unknown qnn chip", []string{"--backend", "qnn", model, "--soc", "SM9999"}, "export: --soc SM9999 is not a Qualcomm chip configured for export"},
		{"a MediaTek chip plan does not offer", []string{"--backend", "mediatek", model, "--soc", "MT6989"}, "the configured ones are MT6991"},
		{"negative timeout", []string{"--backend", "xnnpack", model, "--timeout", "-5m"}, "export: --timeout -5m0s is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			args := append([]string{"export", "--out", root + "/out", "--work", root + "/work", "--python", filepath.Join(bin, "python-ok")}, tc.extra...)
			code, out, errs := run(t, args...)
			assert.Equal(t, ExitFailed, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			assert.NoDirExists(t, root+"/out")
			assert.NoDirExists(t, root+"/work")
		})
	}
}

// TestExportOfflineDialsNothing: with EXE_EXPO_OFFLINE=1 a Hub id is refused with one
// sentence and no connection reaches HF_ENDPOINT. The listener's backlog is FIFO, so when
// the test's own marker connection is the first one accepted, nothing dialled before it.
func TestExportOfflineDialsNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	t.Setenv("HF_ENDPOINT", "http://"+l.Addr().String())
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	root := t.TempDir()

	code, out, errs := run(t, "export", "--backend", "xnnpack", "Qwen/Qwen3-0.6B", "--context", "2048",
		"--out", root+"/out", "--work", root+"/work", "--python", os.Args[0])
	assert.Equal(t, ExitFailed, code)
	assert.Empty(t, out)
	assert.Equal(t, "export failed: Qwen/Qwen3-0.6B is a Hub id and EXE_EXPO_OFFLINE=1 keeps exe-expo off the Hub: give a local model folder instead\n", errs)
	assert.NoDirExists(t, root+"/work")

	marker, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer marker.Close()
	first, err := l.Accept()
	require.NoError(t, err)
	defer first.Close()
	assert.Equal(t, marker.LocalAddr().String(), first.RemoteAddr().String(), "the export dialled HF_ENDPOINT")
}

// TestExportFromHub exports a Hub id end to end through the real Hub client against the
// local Hub: metadata and headers by range, the gate, then the download at the commit
// model info named.
func TestExportFromHub(t *testing.T) {
	bin := standinBin(t)
	dir := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	files := map[string][]byte{}
	require.NoError(t, fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		files[p] = b
		return err
	}))
	srv := hubtest.New(t)
	srv.MustAddModel(t, "Qwen/Qwen3-0.6B", files, hubtest.PipelineTag("text-generation"))
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("EXE_EXPO_OFFLINE", "")
	root := t.TempDir()

	code, out, errs := run(t, "export", "--backend", "xnnpack", "Qwen/Qwen3-0.6B", "--context", "2048",
		"--out", root+"/out", "--work", root+"/work", "--python", filepath.Join(bin, "python-ok"))
	require.Equal(t, ExitOK, code, errs)
	var res struct{ Report string }
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	rep, err := report.Read(res.Report)
	require.NoError(t, err)
	assert.Equal(t, "Qwen/Qwen3-0.6B", rep.Source.ID)
	assert.Equal(t, srv.Head("Qwen/Qwen3-0.6B"), rep.Source.SHA)
	assert.Equal(t, "tokenizer.json", rep.Tokenizer)
	assert.FileExists(t, filepath.Join(root, "out", "LICENSE"))
	assert.Contains(t, errs, "exe-expo: downloaded model.safetensors (")

	// a window past the model's limit is refused on the metadata: nothing is downloaded
	small := exporttest.ModelDir(t, "HuggingFaceTB/SmolLM2-135M-Instruct")
	files = map[string][]byte{}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		b, err := os.ReadFile(filepath.Join(small, name))
		require.NoError(t, err)
		files[name] = b
	}
	srv.MustAddModel(t, "HuggingFaceTB/SmolLM2-135M-Instruct", files, hubtest.PipelineTag("text-generation"))
	code, out, errs = run(t, "export", "--backend", "xnnpack", "HuggingFaceTB/SmolLM2-135M-Instruct", "--context", "16384", "--keep-work",
		"--out", root+"/out2", "--work", root+"/work2", "--python", filepath.Join(bin, "python-ok"))
	assert.Equal(t, ExitFailed, code)
	assert.Empty(t, out)
	assert.Equal(t, "export: --context 16384 is over HuggingFaceTB/SmolLM2-135M-Instruct's 8,192-token limit (max_position_embeddings in its config.json)\n", errs)
	assert.NoDirExists(t, filepath.Join(root, "work2", "source"), "files were downloaded before the window was checked")
}

// TestExportInActions checks what a workflow step gets: the token masked, a step summary
// with the file table, the skip as a warning.
func TestExportInActions(t *testing.T) {
	bin := standinBin(t)
	model := exporttest.ModelDir(t, "Qwen/Qwen3-0.6B")
	root := t.TempDir()
	summary := filepath.Join(root, "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("HF_TOKEN", "hf_secretvalue123")
	code, out, errs := run(t, "export", "--backend", "xnnpack", model, "--context", "2048", "--out", root+"/out", "--work", root+"/work",
		"--python", filepath.Join(bin, "python-ok"))
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "::add-mask::hf_secretvalue123", "token not masked")
	assert.Contains(t, errs, "::group::export_llm")
	assert.Contains(t, errs, "::endgroup::")
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	for _, want := range []string{"### Qwen3-0.6B → xnnpack, any arm64, 2048 tokens", "| `xnnpack/Qwen3-0.6B-8da4w-2k.pte` |", "| structural check (xnnpack): passed |", "Window: requested window 2048"} {
		assert.Contains(t, string(md), want)
	}

	llama := exporttest.ModelDir(t, "meta-llama/Llama-3.2-1B-Instruct")
	code, out, _ = run(t, "export", "--config", hugeWindowConfig(t), "--backend", "xnnpack", llama, "--context", "131072",
		"--out", root+"/out2", "--work", root+"/work2", "--python", filepath.Join(bin, "python-ok"))
	assert.Equal(t, ExitSkipped, code)
	assert.Contains(t, out, "::warning::")
	md, err = os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "window skipped")
	assert.NotContains(t, string(md), "hf_secretvalue123", "the token reached the summary")
}
