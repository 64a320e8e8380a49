package export_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestValidateRefusesBeforeWork runs every refused input through Run: each is an
// *InputError naming its field, in words that name no command-line flag, exit 2, and
// nothing is left on disk (no work folder, no output folder), so no download, conversion
// or tool run can have started. The CLI's wording of each is pinned in internal/cli.
func TestValidateRefusesBeforeWork(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	noMTK := t.TempDir() // an ExecuTorch tree without examples/mediatek
	tests := append(append(choiceRefusals(t, file), calibrationRefusals(t, file)...), placeRefusals(t, file, noMTK)...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
			tc.edit(&o)
			_, err := export.Run(context.Background(), o)
			var in *export.InputError
			require.ErrorAs(t, err, &in)
			assert.Equal(t, tc.field, in.Field)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "--", "a library refusal names a flag")
			assert.Equal(t, 2, export.ExitCode(err))
			for _, dir := range []string{o.Out, o.Work} {
				if !strings.HasPrefix(dir, file) {
					assert.NoDirExists(t, dir, "a refused export left a folder behind")
				}
			}
		})
	}
}

// refusal is one input TestValidateRefusesBeforeWork refuses: the change to good options,
// the field the refusal names and words it must hold.
type refusal struct {
	name  string
	edit  func(o *export.Options)
	field export.Field
	want  string
}

// choiceRefusals refuse the export's choices: backend, chip, window, qmode and codes.
func choiceRefusals(t *testing.T, file string) []refusal {
	return []refusal{
		{"no backend", func(o *export.Options) { o.Backend = "" }, export.FieldBackend, "Backend is required: one of xnnpack, vulkan, qnn, mediatek"},
		{"unknown backend", func(o *export.Options) { o.Backend = "coreml" }, export.FieldBackend, "Backend coreml is not one of xnnpack"},
		{"soc for xnnpack", func(o *export.Options) { o.SoC = "SM8750" }, export.FieldSoC, "SoC SM8750 does not apply to xnnpack"},
		{"qnn without soc", func(o *export.Options) { o.Backend = "qnn" }, export.FieldSoC, "SoC is required for qnn: one of SM8750, SM8650"},
		{"unknown qnn chip", func(o *export.Options) { o.Backend, o.SoC = "qnn", "SM9999" }, export.FieldSoC,
			"SoC SM9999 is not a Qualcomm chip configured for export: the configured ones are SM8750, SM8650"},
		{"a MediaTek chip plan does not list", func(o *export.Options) { o.Backend, o.SoC = "mediatek", "MT6989" }, export.FieldSoC,
			"SoC MT6989 is not a MediaTek chip configured for export: the configured ones are MT6991 (export.mediatek.socs"},
		{"a Qualcomm chip for mediatek", func(o *export.Options) { o.Backend, o.SoC = "mediatek", "SM8750" }, export.FieldSoC, "the configured ones are MT6991"},
		{"negative window", func(o *export.Options) { o.Window = -1 }, export.FieldWindow, "Window -1 is negative"},
		{"window that is no tier", func(o *export.Options) { o.Window = 1_000_000 }, export.FieldWindow,
			"Window 1000000 is not a configured window for xnnpack: give one of 2048, 4096, 8192, 16384, 32768"},
		{"mediatek's cache size is not an xnnpack window", func(o *export.Options) { o.Window = 512 }, export.FieldWindow, "Window 512 is not a configured window"},
		{"unknown qmode", func(o *export.Options) { o.QMode = "int8" }, export.FieldQMode, "QMode int8 is not one the recipes know"},
		{"qmode for qnn", func(o *export.Options) { o.Backend, o.SoC, o.QMode = "qnn", "SM8750", "fp32" }, export.FieldQMode, "QMode applies to xnnpack and vulkan"},
		{"missing codes", func(o *export.Options) { o.Codes = filepath.Join(t.TempDir(), "codes.pt") }, export.FieldCodes, "codes.pt cannot be read: no such file or directory"},
		{"codes folder", func(o *export.Options) { o.Codes = t.TempDir() }, export.FieldCodes, "is not a file"},
		{"codes for qnn", func(o *export.Options) { o.Backend, o.SoC, o.Codes = "qnn", "SM8750", file }, export.FieldCodes, "Codes applies to xnnpack and vulkan, not qnn"},
		{"codes with fp32", func(o *export.Options) { o.Codes, o.QMode = file, "fp32" }, export.FieldCodes, "QMode fp32 quantizes nothing"},
	}
}

// calibrationRefusals refuse QNN's calibrate-once options.
func calibrationRefusals(t *testing.T, file string) []refusal {
	return []refusal{
		{"calibration for xnnpack", func(o *export.Options) { o.Calibration = file }, export.FieldCalibration,
			"Calibration, CalibrateOnly and CalibrationOut apply to qnn, whose recipe can calibrate once per model and chip, not to xnnpack"},
		{"calibrate only without a file to write", func(o *export.Options) { o.Backend, o.SoC, o.CalibrateOnly = "qnn", "SM8750", true }, export.FieldCalibrateOnly,
			"CalibrateOnly and CalibrationOut go together"},
		{"calibrate only and build from a calibration", func(o *export.Options) {
			o.Backend, o.SoC, o.CalibrateOnly, o.CalibrationOut, o.Calibration = "qnn", "SM8750", true, filepath.Join(t.TempDir(), "c.pt"), file
		}, export.FieldCalibration, "Calibration builds a window from a calibration, and CalibrateOnly makes one: give one of them"},
		{"calibrate only at another window", func(o *export.Options) {
			o.Backend, o.SoC, o.CalibrateOnly, o.CalibrationOut, o.Window = "qnn", "SM8750", true, filepath.Join(t.TempDir(), "c.pt"), 4096
		}, export.FieldWindow, "Window 4096: CalibrateOnly calibrates at export.qnn.calib_window (2048)"},
		{"calibration file to write is a folder", func(o *export.Options) {
			o.Backend, o.SoC, o.CalibrateOnly, o.CalibrationOut = "qnn", "SM8750", true, t.TempDir()
		}, export.FieldCalibrationOut, "is a folder: give the file to write"},
		{"calibration file inside the work folder", func(o *export.Options) {
			o.Backend, o.SoC, o.CalibrateOnly, o.CalibrationOut = "qnn", "SM8750", true, filepath.Join(o.Work, "c.pt")
		}, export.FieldCalibrationOut, "which is removed after a success"},
		{"missing calibration", func(o *export.Options) {
			o.Backend, o.SoC, o.Calibration = "qnn", "SM8750", filepath.Join(t.TempDir(), "c.pt")
		}, export.FieldCalibration,
			"c.pt cannot be read: no such file or directory"},
		{"calibration folder", func(o *export.Options) { o.Backend, o.SoC, o.Calibration = "qnn", "SM8750", t.TempDir() }, export.FieldCalibration,
			"is a folder: give the file a calibrate-only export wrote"},
	}
}

// placeRefusals refuse the host's tools and folders and the model's name.
func placeRefusals(t *testing.T, file, noMTK string) []refusal {
	return []refusal{
		{"negative timeout", func(o *export.Options) { o.Timeout = -time.Second }, export.FieldTimeout, "Timeout -1s is negative"},
		{"python missing", func(o *export.Options) { o.Python = "no-such-python-exe-expo" }, export.FieldPython,
			"Python no-such-python-exe-expo cannot be run (not found on PATH): point Python or EXE_EXPO_PYTHON at a python with ExecuTorch " + pinned.Version() + ""},
		{"mediatek without its python", func(o *export.Options) { o.Backend, o.SoC, o.ExecuTorch = "mediatek", "MT6991", noMTK }, export.FieldMTKPython, "MTKPython is required for mediatek"},
		{"mediatek without examples/mediatek", func(o *export.Options) {
			o.Backend, o.SoC, o.ExecuTorch, o.MTKPython = "mediatek", "MT6991", noMTK, filepath.Join(standin, "python-ok")
		}, export.FieldExecuTorch, "ExecuTorch " + noMTK + " has no examples/mediatek folder"},
		{"executorch that is no folder", func(o *export.Options) { o.Backend, o.SoC, o.ExecuTorch = "qnn", "SM8750", file }, export.FieldExecuTorch, "is not a folder"},
		{"out under a file", func(o *export.Options) { o.Out = filepath.Join(file, "out") }, export.FieldOut, "Out " + filepath.Join(file, "out") + " cannot be created: not a directory"},
		{"work under a file", func(o *export.Options) { o.Work = filepath.Join(file, "work") }, export.FieldWork, "Work " + filepath.Join(file, "work") + " cannot be created: not a directory"},
		{"work is out", func(o *export.Options) { o.Work = o.Out }, export.FieldWork, "Work and Out must differ"},
		{"work inside out", func(o *export.Options) { o.Work = filepath.Join(o.Out, "work") }, export.FieldWork, "is inside Out"},
		{"id that is no Hub id", func(o *export.Options) { o.ID = "no slash" }, export.FieldID, `ID "no slash" is not a Hugging Face model id (org/name)`},
		{"id for a Hub model", func(o *export.Options) { o.Model, o.ID, o.Fetcher = "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", &fakeHub{} }, export.FieldID,
			"ID names the Hub id of a local model folder, and Qwen/Qwen3-0.6B is a Hub id already"},
		{"neither folder nor id", func(o *export.Options) { o.Model = "not a model" }, export.FieldModel, `"not a model" is neither a local model folder nor a Hugging Face model id`},
		{"hub id without a client", func(o *export.Options) { o.Model = "Qwen/Qwen3-0.6B" }, export.FieldModel, "Qwen/Qwen3-0.6B is a Hub id and this export has no Hub client"},
	}
}

// TestWindowOverModelLimit holds --context to the model's max_position_embeddings
// (SmolLM2-135M-Instruct: 8,192), and keeps the automatic window under it too.
func TestWindowOverModelLimit(t *testing.T) {
	o := options(t, "HuggingFaceTB/SmolLM2-135M-Instruct", "xnnpack", "ok", 16384)
	_, err := export.Run(context.Background(), o)
	var in *export.InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, export.FieldWindow, in.Field)
	assert.Equal(t, "Window 16384 is over SmolLM2-135M-Instruct's 8,192-token limit (max_position_embeddings in its config.json)", err.Error())
	assert.NoDirExists(t, o.Work)

	// the test host (host) builds 16k of a 135M model; the limit caps the automatic pick (the
	// export then stops at the converter, which has no plan for this fixture's tensors)
	o = options(t, "HuggingFaceTB/SmolLM2-135M-Instruct", "xnnpack", "ok", 0)
	var log strings.Builder
	o.Log = &log
	_, _ = export.Run(context.Background(), o)
	assert.Contains(t, log.String(), "exe-expo: SmolLM2-135M-Instruct to xnnpack at 8192 tokens (largest window this host can export: 8192)")
}

// TestInputErrorSentence: a refusal names options as Fields, not as text, so a caller
// words every one its own way, the options it names besides its own field included.
func TestInputErrorSentence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "codes.pt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
	o.Codes, o.QMode = file, "fp32"
	_, err := export.Run(context.Background(), o)
	var in *export.InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, export.FieldCodes, in.Field)
	assert.Equal(t, "Codes holds int4 GPTQ codes, and QMode fp32 quantizes nothing", in.Error())
	named := in.Sentence(func(f export.Field) string { return "<" + strings.ToLower(string(f)) + ">" })
	assert.Equal(t, "<codes> holds int4 GPTQ codes, and <qmode> fp32 quantizes nothing", named)
}

// TestFailedExportRemovesWork: a failed export removes the work folder it created, keeps
// it with KeepWork, and never removes a work folder that was there before.
func TestFailedExportRemovesWork(t *testing.T) {
	o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "fail", 2048)
	_, err := export.Run(context.Background(), o)
	require.Error(t, err)
	assert.NoDirExists(t, o.Work)
	assert.NoDirExists(t, o.Out, "the output folder was created by the export and stayed empty")

	o = options(t, "Qwen/Qwen3-0.6B", "xnnpack", "fail", 2048)
	o.KeepWork = true
	_, err = export.Run(context.Background(), o)
	require.Error(t, err)
	assert.FileExists(t, filepath.Join(o.Work, "drivers", "convert.py"), "--keep-work keeps the failed export's files")

	o = options(t, "Qwen/Qwen3-0.6B", "xnnpack", "fail", 2048)
	require.NoError(t, os.MkdirAll(o.Work, 0o755))
	mine := filepath.Join(o.Work, "mine.txt")
	require.NoError(t, os.WriteFile(mine, []byte("kept"), 0o644))
	_, err = export.Run(context.Background(), o)
	require.Error(t, err)
	assert.FileExists(t, mine, "a work folder the export did not create is not removed")

	o = options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 32768) // skipped on the test host (host)
	_, err = export.Run(context.Background(), o)
	require.Equal(t, 4, export.ExitCode(err), "%v", err)
	assert.NoDirExists(t, o.Work, "a skipped export removes its work folder")
}

// fakeHub serves a model folder as a Hub repo and records the downloads asked of it.
type fakeHub struct {
	dir string
	sha string
	err error // Source's answer, when set

	mu      sync.Mutex
	fetched []string // "revision weights=bool" per Fetch
}

func (f *fakeHub) Source(_ context.Context, id, revision string) (*model.Source, model.Files, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	return &model.Source{ID: id, Revision: revision, SHA: f.sha, PipelineTag: "text-generation"}, model.Dir(f.dir), nil
}

func (f *fakeHub) Fetch(_ context.Context, id, revision, dir string, weights bool) (*model.Source, error) {
	f.mu.Lock()
	f.fetched = append(f.fetched, revision+" weights="+map[bool]string{true: "true", false: "false"}[weights])
	f.mu.Unlock()
	if err := os.CopyFS(dir, os.DirFS(f.dir)); err != nil {
		return nil, err
	}
	return &model.Source{ID: id, Revision: revision, SHA: f.sha}, nil
}

func (f *fakeHub) downloads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.fetched...)
}

// TestHubModelCheckedBeforeDownload: a Hub model's window and host fit are checked on its
// metadata (config.json, safetensors headers by range) before anything is downloaded,
// and the download is at the commit the metadata came from.
func TestHubModelCheckedBeforeDownload(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name      string
		id        string
		window    int
		code      int
		downloads []string
	}{
		{"over the model's limit", "HuggingFaceTB/SmolLM2-135M-Instruct", 16384, 2, nil},
		{"skipped by the gate", "Qwen/Qwen3-1.7B", 32768, 4, nil},
		{"exported", "Qwen/Qwen3-0.6B", 2048, 0, []string{sha + " weights=true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeHub{dir: modelDir(t, tc.id), sha: sha}
			o := options(t, tc.id, "xnnpack", "ok", tc.window)
			o.Model, o.Fetcher = tc.id, f
			res, err := export.Run(context.Background(), o)
			require.Equal(t, tc.code, export.ExitCode(err), "%v", err)
			assert.Equal(t, tc.downloads, f.downloads())
			if tc.code == 0 {
				assert.Equal(t, sha, res.Report.Source.SHA)
				assert.Equal(t, tc.id, res.Report.Source.ID)
			}
		})
	}
}

// TestUnreachableHubIsOneSentence: a Hub this host cannot reach is named once, with what
// to do, and nothing is downloaded.
func TestUnreachableHubIsOneSentence(t *testing.T) {
	f := &fakeHub{err: &source.UnreachableError{Endpoint: "https://huggingface.co", Reason: "its host name does not resolve"}}
	o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
	o.Model, o.Fetcher = "Qwen/Qwen3-0.6B", f
	_, err := export.Run(context.Background(), o)
	require.Error(t, err)
	assert.Equal(t, "Qwen/Qwen3-0.6B cannot be read: the Hugging Face Hub at https://huggingface.co could not be reached (its host name does not resolve); "+
		"give a local model folder, or point HF_ENDPOINT at a Hub this host can reach", err.Error())
	assert.Empty(t, f.downloads())
	assert.NoDirExists(t, o.Work)

	o = options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
	o.Model, o.Fetcher = "Qwen/Qwen3-0.6B", source.Offline{Why: "EXE_EXPO_OFFLINE=1"}
	_, err = export.Run(context.Background(), o)
	require.Error(t, err)
	assert.Equal(t, "Qwen/Qwen3-0.6B is a Hub id and EXE_EXPO_OFFLINE=1 keeps exe-expo off the Hub: give a local model folder instead", err.Error())
}

// TestErrorsReadAsSentences pins the wording of failures whose causes are Go errors: no
// operation prefixes, no path said twice, no trailing colon, and a hint where one helps.
func TestErrorsReadAsSentences(t *testing.T) {
	noConfig := t.TempDir()
	tests := []struct {
		name string
		edit func(o *export.Options)
		want string
	}{
		{"folder without config.json", func(o *export.Options) { o.Model = noConfig },
			noConfig + " is a folder without config.json; give a model folder or a Hub id (org/name)"},
		{"python that prints nothing", func(o *export.Options) { o.Python = "/usr/bin/true" },
			`/usr/bin/true could not say which toolchain it has: it answered "", not the JSON the version probe prints; is it a python?`},
		{"python that fails silently", func(o *export.Options) { o.Python = "/usr/bin/false" },
			"/usr/bin/false could not say which toolchain it has (exit status 1)"},
		{"python without executorch", func(o *export.Options) { o.Python = filepath.Join(standin, "python-noet") },
			filepath.Join(standin, "python-noet") + " has no executorch installed; the export needs ExecuTorch " + pinned.Version() + ": point Python (or EXE_EXPO_PYTHON) at a python that has it"},
		{"python that is a folder", func(o *export.Options) { o.Python = noConfig },
			"Python " + noConfig + " cannot be run (is a directory): point Python or EXE_EXPO_PYTHON at a python with ExecuTorch " + pinned.Version() + ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
			tc.edit(&o)
			_, err := export.Run(context.Background(), o)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestRelativeCodesMadeAbsolute: the tool runs in the work folder, so a codes file given
// relative to where the export was started (the workflow's codes/codes.pt) is passed on as
// an absolute path. Found when the workflow ran the real toolchain under act.
func TestRelativeCodesMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "codes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "codes", "codes.pt"), []byte("x"), 0o644))
	t.Chdir(dir)
	o := options(t, "Qwen/Qwen3-0.6B", "xnnpack", "ok", 2048)
	o.Codes = filepath.Join("codes", "codes.pt")
	require.NoError(t, o.Validate())
	assert.Equal(t, filepath.Join(dir, "codes", "codes.pt"), o.Codes)
}

// TestWindowOverLongRoPELimit: Phi-4-mini's files stop at 4,096 tokens, above which
// export_llm would apply LongRoPE's long factors at every position (family.phi4miniPlan):
// a request above it is refused before any work, and the automatic pick stays under it
// although the host could build more.
func TestWindowOverLongRoPELimit(t *testing.T) {
	o := options(t, "microsoft/Phi-4-mini-instruct", "vulkan", "ok", 8192)
	_, err := export.Run(context.Background(), o)
	var in *export.InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, export.FieldWindow, in.Field)
	assert.Equal(t, "Window 8192 is above the 4,096 tokens Phi-4-mini-instruct's files stop at: export_llm fixes LongRoPE's factors per file, and a longer window would rotate every position by the long factors, which transformers applies only once a conversation passes 4,096 tokens (original_max_position_embeddings)", err.Error())
	assert.NoDirExists(t, filepath.Join(o.Work, "source"))

	o = options(t, "microsoft/Phi-4-mini-instruct", "xnnpack", "ok", 0)
	var log strings.Builder
	o.Log = &log
	_, _ = export.Run(context.Background(), o) // stops at the converter: the fixture's tensors are Qwen3's
	assert.Contains(t, log.String(), "exe-expo: Phi-4-mini-instruct to xnnpack at 4096 tokens (largest window this host can export: 4096)")
}
