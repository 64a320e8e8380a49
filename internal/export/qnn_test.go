package export_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// qnnOptions is a QNN export of id from a fake Hub at sha, through the stand-in launcher
// invoked as python-<mode>.
func qnnOptions(t *testing.T, id, mode, sha string) (export.Options, *fakeHub, string) {
	t.Helper()
	et := t.TempDir()
	f := &fakeHub{dir: modelDir(t, id), sha: sha}
	o := options(t, id, "qnn", mode, 2048)
	o.Model, o.Fetcher, o.SoC, o.ExecuTorch = id, f, "SM8750", et
	return o, f, et
}

// TestQNNExportReadsThePlannedRevision: the Qualcomm script is handed the download made at
// the commit the plan resolved (the safetensors for a registry model, Meta's original/
// files for Llama 3.2, whose download still brings the safetensors for the simulated
// quality figure's fp32 reference), and the report records that revision, what the script
// read from it, and the calibration rows the launcher saw.
func TestQNNExportReadsThePlannedRevision(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name, id string
		download string
		read     []report.InputFile
	}{
		{"a registry model served from the download", "Qwen/Qwen3-0.6B", sha + " weights=true", []report.InputFile{
			{What: "tokenizer", Path: "."}, {What: "checkpoint", Path: "."},
			{What: "params", Path: "ET/examples/models/qwen3/config/0_6b_config.json"}}},
		{"Llama 3.2 by Meta's files", "meta-llama/Llama-3.2-1B-Instruct", sha + " weights=true", []report.InputFile{
			{What: "checkpoint", Path: "original/consolidated.00.pth"}, {What: "params", Path: "original/params.json"},
			{What: "tokenizer", Path: "original/tokenizer.model"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, f, et := qnnOptions(t, tc.id, "ok", sha)
			res, err := export.Run(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.download}, f.downloads())
			in := res.Report.Inputs
			require.NotNil(t, in, "the report records what the script read")
			assert.Equal(t, tc.id, in.Model)
			assert.Equal(t, sha, in.Revision)
			for i := range tc.read {
				if p, ok := strings.CutPrefix(tc.read[i].Path, "ET/"); ok {
					tc.read[i].Path = filepath.Join(et, p)
				}
			}
			assert.ElementsMatch(t, tc.read, in.Read)
			c := in.Calibration
			assert.Equal(t, []string{"wikitext"}, c.Tasks)
			assert.Equal(t, 1, c.Limit)
			assert.Len(t, c.TokensSHA256, 64)
			require.Len(t, c.Datasets, 1)
			assert.Equal(t, "EleutherAI/wikitext_document_level", c.Datasets[0].Path)
			assert.Nil(t, c.Datasets[0].Revision, "lm_eval asks for no dataset revision, and the report says so")

			var onDisk struct {
				Inputs *report.Inputs `json:"inputs"`
			}
			b, err := os.ReadFile(res.ReportPath)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &onDisk))
			assert.Equal(t, in, onDisk.Inputs, "the written report carries the inputs")
		})
	}
}

// TestQNNExportRefusesAnUnprovenRevision: a launcher record that is missing, or that
// says the checkpoint came from outside the download, fails the export: the report could
// not say which revision the file was built from. So does a run that saved no QDQ program:
// the report's simulated figure could not be measured.
func TestQNNExportRefusesAnUnprovenRevision(t *testing.T) {
	tests := []struct{ mode, want string }{
		{"norecord", "the qnn tool finished but wrote no record of what it read ("},
		{"noqdq", "the qnn tool finished but its QDQ program, which the simulated quality figure runs on the CPU, is not at "},
		{"stray", "the qnn tool read its tokenizer from " + os.TempDir() + ", not from the download of Qwen/Qwen3-0.6B"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			o, _, _ := qnnOptions(t, "Qwen/Qwen3-0.6B", tc.mode, "0123456789abcdef0123456789abcdef01234567")
			_, err := export.Run(context.Background(), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 2, export.ExitCode(err))
			assert.NoFileExists(t, filepath.Join(o.Out, "qnn", "sm8750", "export-report-2k.json"), "a failed export leaves no report")
		})
	}
}

// TestQNNExportRecordsSimulatedQuality: after the Qualcomm script, the export runs its
// saved QDQ program against fp32 over the fidelity text (the stand-in answers for
// gate_probe.py: 75% of positions agree, KL 0) and the report's quality block records it
// as simulated, beside "not measured here" for the file itself, over the text's tokens
// bounded by the window (a 4,096-token text is read to the 2,048-token window).
func TestQNNExportRecordsSimulatedQuality(t *testing.T) {
	for _, tokens := range []int{2048, 4096} {
		t.Run(fmt.Sprint(tokens), func(t *testing.T) {
			res, log := runQNN(t, func(o *export.Options) {
				cfg := *o.Config
				cfg.Gate.FidelityTokens = tokens
				o.Config = &cfg
			})
			q := res.Report.Quality
			require.NotNil(t, q)
			assert.False(t, q.Measured, "the file itself runs only on the HTP")
			assert.Equal(t, "not measured here: Qualcomm QNN (HTP) needs a phone", q.NotMeasured)
			require.NotNil(t, q.Simulated)
			assert.Equal(t, gate.QDQOnCPU, q.Simulated.By)
			assert.Equal(t, "fidelity-text.txt", q.Simulated.Text.File)
			assert.Len(t, q.Simulated.Text.SHA256, 64)
			assert.Equal(t, 2048, q.Simulated.Positions, "the text's tokens, bounded by the 2,048-token window")
			assert.Equal(t, 32, q.Simulated.TopK)
			assert.Equal(t, 1536, q.Simulated.Agreed)
			assert.InDelta(t, 0.75, q.Simulated.NextTokenAgreement, 1e-12)
			assert.InDelta(t, 0, q.Simulated.MeanKL, 1e-12)
			assert.Contains(t, log, "exe-expo: simulated on the CPU (QDQ program, not the HTP): next token 75.0% of 2,048, mean KL 0.000; not measured here")

			require.Len(t, res.Report.Stages, 2, "the tool's stages, then the simulated measure's")
			assert.Equal(t, "qnn_llama", res.Report.Stages[0].Tool)
			assert.Equal(t, export.SimulatedStage, res.Report.Stages[1].Tool)

			back, err := report.Read(res.ReportPath)
			require.NoError(t, err)
			assert.Equal(t, q, back.Quality, "the written report carries the block")
		})
	}
}

// TestQNNExportSimulatesUpToAWindow: up to export.MaxSimulatedWindow the QDQ program
// (every position in one call) is run; just above it, it is not, the quality block says
// why, and the export passes.
func TestQNNExportSimulatesUpToAWindow(t *testing.T) {
	require.Equal(t, 4096, export.MaxSimulatedWindow, "the windows below sit just inside and just outside it")
	res, log := runQNN(t, func(o *export.Options) { o.Window = 4096 })
	require.NotNil(t, res.Report.Quality)
	assert.NotNil(t, res.Report.Quality.Simulated, "at the largest window simulated")
	assert.Contains(t, log, "measuring the QDQ program")

	res, log = runQNN(t, func(o *export.Options) { o.Window = 8192 })
	q := res.Report.Quality
	require.NotNil(t, q)
	assert.Nil(t, q.Simulated)
	assert.Equal(t, "not measured here: Qualcomm QNN (HTP) needs a phone", q.NotMeasured)
	assert.Equal(t, "not simulated: the QDQ program computes all 8,192 positions in one call, whose attention is too large to run here (the simulated figure is measured up to 4,096 tokens)", q.SimulatedMissing)
	assert.NotContains(t, log, "measuring the QDQ program")
	require.Len(t, res.Report.Stages, 1, "no simulated measure ran")
}

// runQNN exports Qwen3-0.6B to QNN with the stand-in tool, as edit sets the options; it
// returns the result and the export's log.
func runQNN(t *testing.T, edit func(*export.Options)) (*export.Result, string) {
	t.Helper()
	o, _, _ := qnnOptions(t, "Qwen/Qwen3-0.6B", "ok", "0123456789abcdef0123456789abcdef01234567")
	edit(&o)
	var log bytes.Buffer
	o.Log = &log
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err, "%s", log.String())
	return res, log.String()
}

// TestQNNCalibrationFile: a calibrate-only export writes the launcher's calibration file and
// its report beside it, and builds no program; an export given that file passes it to the
// launcher and its report names the file and its sha256, which must be the file's own.
func TestQNNCalibrationFile(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	file := filepath.Join(t.TempDir(), "calibration", "calibration.pt")
	o, _, _ := qnnOptions(t, "Qwen/Qwen3-0.6B", "ok", sha)
	o.Window, o.CalibrateOnly, o.CalibrationOut = 0, true, file
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Len(t, res.Report.Files, 1)
	assert.Equal(t, report.File{Path: "calibration.pt", Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, res.Report.Files[0])
	assert.Equal(t, filepath.Join(filepath.Dir(file), "export-report-calibration-2k.json"), res.ReportPath, "the report lies beside the file")
	assert.FileExists(t, res.ReportPath)
	assert.Equal(t, 2048, res.Report.Window.Context, "calibrated at export.qnn.calib_window")
	assert.Contains(t, res.Report.Recipe["description"], "calibration only")
	assert.NoDirExists(t, filepath.Join(o.Out, "qnn"), "no program, no report in the output layout")

	for _, tc := range []struct{ mode, want string }{
		{"ok", ""},
		{"wrongsha", "the qnn tool loaded a calibration file of sha256 "},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			o, _, _ := qnnOptions(t, "Qwen/Qwen3-0.6B", tc.mode, sha)
			o.Window, o.Calibration = 4096, file
			res, err := export.Run(context.Background(), o)
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), "and "+file+" has "+hex.EncodeToString(sum[:]))
				return
			}
			require.NoError(t, err)
			require.NotNil(t, res.Report.Inputs)
			f := res.Report.Inputs.CalibrationFile
			require.NotNil(t, f, "the report says the calibration came from a file")
			assert.Equal(t, "calibration.pt", f.Path)
			assert.Equal(t, hex.EncodeToString(sum[:]), f.SHA256)
			assert.Equal(t, 2048, f.Window)
			assert.Equal(t, []string{"_frozen_param21 4096x8 (the file's 2048x8)"}, f.KeptConstants)
			assert.Equal(t, "calibration.pt", res.Report.Recipe["calibration"].(map[string]any)["file"])
		})
	}
}
