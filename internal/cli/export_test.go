package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/export/exporttest"
	"github.com/experimentalmachines/exe-expo/internal/option"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
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

// refusalCase is one refused export command line: its flags after the defaults and the
// sentence the CLI prints for it.
type refusalCase struct {
	name  string
	extra []string
	want  string // the sentence after "export: "
}

// refusalPaths are the paths the refusals give as flag values, made fresh for each run.
type refusalPaths struct {
	model    string // a local model folder
	file     string // a plain file, where a folder is needed or above a folder to create
	noMTK    string // an ExecuTorch tree without examples/mediatek
	missing  string // a codes file that does not exist
	codesDir string // a folder given as the codes file
	ok       string // the stand-in python that exports
}

// newRefusalPaths makes the files and folders the refusals name.
func newRefusalPaths(t *testing.T) refusalPaths {
	t.Helper()
	f := refusalPaths{
		model:    exporttest.ModelDir(t, "Qwen/Qwen3-0.6B"),
		file:     filepath.Join(t.TempDir(), "a-file"),
		noMTK:    t.TempDir(),
		missing:  filepath.Join(t.TempDir(), "codes.pt"),
		codesDir: t.TempDir(),
		ok:       filepath.Join(standinBin(t), "python-ok"),
	}
	require.NoError(t, os.WriteFile(f.file, []byte("x"), 0o644))
	return f
}

// refusalCases are the refused command lines, one per flag and way of getting it wrong.
func refusalCases(f refusalPaths) []refusalCase {
	const tiers = "2048, 4096, 8192, 16384, 32768"
	return []refusalCase{
		{"no backend", []string{f.model}, "--backend is required: one of xnnpack, vulkan, qnn, mediatek"},
		{"unknown backend", []string{"--backend", "coreml", f.model}, "--backend coreml is not one of xnnpack, vulkan, qnn, mediatek"},
		{"soc with xnnpack", []string{"--backend", "xnnpack", f.model, "--soc", "SM8750"},
			"--soc SM8750 does not apply to xnnpack: only qnn and mediatek files are built per chip"},
		{"qnn without soc", []string{"--backend", "qnn", f.model}, "--soc is required for qnn: one of SM8750, SM8650 (export.qnn.socs in pipeline.yaml)"},
		{"unknown qnn chip", []string{"--backend", "qnn", f.model, "--soc", "SM9999"},
			"--soc SM9999 is not a Qualcomm chip configured for export: the configured ones are SM8750, SM8650 (export.qnn.socs in pipeline.yaml)"},
		{"a MediaTek chip plan does not offer", []string{"--backend", "mediatek", f.model, "--soc", "MT6989"},
			"--soc MT6989 is not a MediaTek chip configured for export: the configured ones are MT6991 (export.mediatek.socs in pipeline.yaml)"},
		{"unknown qmode", []string{"--backend", "xnnpack", f.model, "--qmode", "int8"}, "--qmode int8 is not one the recipes know: 8da4w or fp32"},
		{"qmode for qnn", []string{"--backend", "qnn", "--soc", "SM8750", f.model, "--qmode", "fp32"},
			"--qmode applies to xnnpack and vulkan; the qnn recipe's precision is fixed in pipeline.yaml"},
		{"missing codes", []string{"--backend", "xnnpack", f.model, "--codes", f.missing}, "--codes " + f.missing + " cannot be read: no such file or directory"},
		{"codes folder", []string{"--backend", "xnnpack", f.model, "--codes", f.codesDir}, "--codes " + f.codesDir + " is not a file: give the codes file of the GPTQ solve"},
		{"codes for qnn", []string{"--backend", "qnn", "--soc", "SM8750", f.model, "--codes", f.file}, "--codes applies to xnnpack and vulkan, not qnn"},
		{"codes with fp32", []string{"--backend", "xnnpack", f.model, "--codes", f.file, "--qmode", "fp32"},
			"--codes holds int4 GPTQ codes, and --qmode fp32 quantizes nothing"},
		{"calibration for xnnpack", []string{"--backend", "xnnpack", f.model, "--calibration", f.file},
			"--calibration, --calibrate-only and --calibration-out apply to qnn, whose recipe can calibrate once per model and chip, not to xnnpack"},
		{"calibrate only without a file", []string{"--backend", "qnn", "--soc", "SM8750", f.model, "--calibrate-only"},
			"--calibrate-only and --calibration-out go together: a calibrate-only export writes its calibration to that file"},
		{"missing calibration", []string{"--backend", "qnn", "--soc", "SM8750", f.model, "--calibration", f.missing},
			"--calibration " + f.missing + " cannot be read: no such file or directory"},
		{"negative window", []string{"--backend", "xnnpack", f.model, "--context", "-1"},
			"--context -1 is negative: leave it out (or give 0) for the automatic window, or give one of " + tiers},
		{"window that is no tier", []string{"--backend", "xnnpack", f.model, "--context", "1000000"},
			"--context 1000000 is not a configured window for xnnpack: give one of " + tiers + " (export.context_tiers in pipeline.yaml)"},
		{"negative timeout", []string{"--backend", "xnnpack", f.model, "--timeout", "-5m"},
			"--timeout -5m0s is negative: give a duration such as 90m, or 0 for no limit"},
		{"id that is no Hub id", []string{"--backend", "xnnpack", f.model, "--id", "no slash"}, `--id "no slash" is not a Hugging Face model id (org/name)`},
		{"id for a Hub model", []string{"--backend", "xnnpack", "Qwen/Qwen3-0.6B", "--id", "Qwen/Qwen3-1.7B"},
			"--id names the Hub id of a local model folder, and Qwen/Qwen3-0.6B is a Hub id already"},
		{"neither folder nor id", []string{"--backend", "xnnpack", "not a model"},
			`"not a model" is neither a local model folder nor a Hugging Face model id (org/name)`},
		{"python missing", []string{"--backend", "xnnpack", f.model, "--python", "no-such-python-exe-expo"},
			"--python no-such-python-exe-expo cannot be run (not found on PATH): point --python or EXE_EXPO_PYTHON at a python with ExecuTorch " + pinned.Version() + ""},
		{"mediatek without its python", []string{"--backend", "mediatek", "--soc", "MT6991", f.model},
			"--mtk-python is required for mediatek: the python of the NeuroPilot tool virtualenv (or MTK_PYTHON)"},
		{"mediatek python missing", []string{"--backend", "mediatek", "--soc", "MT6991", f.model, "--mtk-python", "no-such-python-exe-expo"},
			"--mtk-python no-such-python-exe-expo cannot be run (not found on PATH): point --mtk-python or MTK_PYTHON at the NeuroPilot tool virtualenv's python"},
		{"mediatek without executorch", []string{"--backend", "mediatek", "--soc", "MT6991", f.model, "--mtk-python", f.ok},
			"--executorch is required for mediatek: an ExecuTorch " + pinned.Version() + " source tree, whose examples/mediatek holds the export scripts (or EXECUTORCH_SRC)"},
		{"mediatek without examples/mediatek", []string{"--backend", "mediatek", "--soc", "MT6991", f.model, "--mtk-python", f.ok, "--executorch", f.noMTK},
			"--executorch " + f.noMTK + " has no examples/mediatek folder: give an ExecuTorch " + pinned.Version() + " source tree (or EXECUTORCH_SRC)"},
		{"executorch that is no folder", []string{"--backend", "qnn", "--soc", "SM8750", f.model, "--executorch", f.file},
			"--executorch " + f.file + " is not a folder: give an ExecuTorch " + pinned.Version() + " source tree (or EXECUTORCH_SRC)"},
		{"no out", []string{"--backend", "xnnpack", f.model, "--out", ""}, "--out is required"},
		{"out under a file", []string{"--backend", "xnnpack", f.model, "--out", filepath.Join(f.file, "out")},
			"--out " + filepath.Join(f.file, "out") + " cannot be created: not a directory"},
		{"work under a file", []string{"--backend", "xnnpack", f.model, "--work", filepath.Join(f.file, "work")},
			"--work " + filepath.Join(f.file, "work") + " cannot be created: not a directory"},
		{"work is out", []string{"--backend", "xnnpack", f.model, "--work", "{root}/out"},
			"--work and --out must differ: the work folder is removed after a success"},
		{"work inside out", []string{"--backend", "xnnpack", f.model, "--work", "{root}/out/work"},
			"--work {root}/out/work is inside --out {root}/out: the work folder would be published"},
		{"out inside work", []string{"--backend", "xnnpack", f.model, "--out", "{root}/work/out"},
			"--out {root}/work/out is inside --work {root}/work: the work folder is removed after a success"},
	}
}

// TestExportRefusesInput: every refused flag is exit 2 with one line, the sentence that
// names the flag as the command line spells it, before anything is created. The library
// names options by their field; these sentences are the CLI's wording of them. {root}
// in an argument or a sentence is the case's own folder.
func TestExportRefusesInput(t *testing.T) {
	t.Setenv("MTK_PYTHON", "")
	t.Setenv("EXECUTORCH_SRC", "")
	f := newRefusalPaths(t)
	for _, tc := range refusalCases(f) {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			args := []string{"export", "--out", root + "/out", "--work", root + "/work", "--python", f.ok}
			for _, a := range tc.extra {
				args = append(args, strings.ReplaceAll(a, "{root}", root))
			}
			code, out, errs := run(t, args...)
			assert.Equal(t, ExitFailed, code)
			assert.Empty(t, out)
			assert.Equal(t, "export: "+strings.ReplaceAll(tc.want, "{root}", root)+"\n", errs)
			assert.NoDirExists(t, root+"/out")
			assert.NoDirExists(t, root+"/work")
		})
	}
}

// TestExportFlagNames: every flag a refusal is worded with is one the export command
// defines, so no sentence points at a flag the user cannot type; and a refusal wrapped in
// context keeps the context when the CLI words it.
func TestExportFlagNames(t *testing.T) {
	c := commands["export"]
	fs := newFlagSet(c, io.Discard)
	c.Flags(fs)
	for field, name := range exportFlags {
		if field == export.FieldModel {
			assert.Equal(t, "MODEL", name)
			continue
		}
		require.True(t, strings.HasPrefix(name, "--"), name)
		assert.NotNil(t, fs.Lookup(strings.TrimPrefix(name, "--")), "%s is worded as %s, which export does not define", field, name)
	}

	_, err := export.Run(context.Background(), export.Options{})
	var in *export.InputError
	require.ErrorAs(t, err, &in)
	wrapped := fmt.Errorf("window 3 of 5: %w", err)
	msg, ok := option.Reword(wrapped, exportFlags)
	require.True(t, ok)
	assert.Equal(t, "window 3 of 5: --backend is required: one of xnnpack, vulkan, qnn, mediatek", msg)
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
	assert.Contains(t, errs, "::add-mask::hf_secretvalue123", "token not masked")
	assert.NotContains(t, out, "::add-mask::", "stdout is the step's data: a mask there breaks `--json > file`")
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
