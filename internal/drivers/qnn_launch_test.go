package drivers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/report"
)

// launchRecord is the record as internal/export reads it; decoding strictly catches a field the
// launcher writes and the export does not know.
type launchRecord struct {
	Repo        *string             `json:"repo"`
	Read        []report.InputFile  `json:"read"`
	Calibration *report.Calibration `json:"calibration"`
	// CalibrationFile is written under --load-calibration.
	CalibrationFile *report.CalibrationFile `json:"calibration_file"`
}

type launch struct {
	record   string // the record's path
	artifact string
	out      string // stdout and stderr
	err      error
}

// runLaunch runs qnn_launch.py with the stand-in ExecuTorch of testdata/qnn_fake.
func runLaunch(t *testing.T, own []string, script ...string) launch {
	t.Helper()
	dir := t.TempDir()
	paths, err := WriteScripts(filepath.Join(dir, "drivers"))
	require.NoError(t, err)
	var launcher string
	for _, p := range paths {
		if filepath.Base(p) == QNNLaunchScript {
			launcher = p
		}
	}
	require.NotEmpty(t, launcher, "WriteScripts writes the launcher")
	fake, err := filepath.Abs(filepath.Join("testdata", "qnn_fake"))
	require.NoError(t, err)
	l := launch{record: filepath.Join(dir, "inputs.json"), artifact: filepath.Join(dir, "artifact")}
	args := append([]string{launcher, "--record", l.record}, own...)
	args = append(append(args, "--", "--artifact", l.artifact), script...)
	cmd := exec.Command(anyPython(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+fake, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	l.out, l.err = string(out), err
	return l
}

func readRecord(t *testing.T, path string) launchRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r launchRecord
	require.NoError(t, dec.Decode(&r), "the record decodes into the export's types")
	return r
}

// rowsDigest is the launcher's digest of token rows: one JSON list (Python's separators)
// per line.
func rowsDigest(rows ...string) string {
	h := sha256.New()
	for _, r := range rows {
		h.Write([]byte(r + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestQNNLaunchServesTheSnapshot: the script's two Hub loads (tokenizer, converted
// checkpoint) are served from the snapshot folder, the conversion runs once into the work
// folder, the script gets its own arguments, and the record says what was read and what
// calibration ran on. Any load the launcher failed to serve would reach the stand-in's Hub
// and fail.
func TestQNNLaunchServesTheSnapshot(t *testing.T) {
	snap := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(snap, "model.safetensors"), []byte("w"), 0o644))
	ckpt := filepath.Join(t.TempDir(), "qnn-checkpoint.pth")
	script := []string{"--decoder_model", "qwen3-0_6b", "--calib_tasks", "wikitext", "--calib_limit", "1",
		"--params", "/et/examples/models/qwen3/config/0_6b_config.json"}
	l := runLaunch(t, []string{"--repo", "Qwen/Qwen3-0.6B", "--snapshot", snap, "--checkpoint", ckpt}, script...)
	require.NoError(t, l.err, l.out)

	conv, err := os.ReadFile(ckpt)
	require.NoError(t, err)
	assert.Equal(t, "converted "+snap+": model.safetensors\n", string(conv), "ExecuTorch's converter ran once, on the snapshot")

	var ran struct {
		Argv      []string `json:"argv"`
		Tokenizer string   `json:"tokenizer"`
	}
	b, err := os.ReadFile(filepath.Join(l.artifact, "argv.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ran))
	assert.Equal(t, append([]string{"--artifact", l.artifact}, script...), ran.Argv, "llama.py gets the arguments after --")
	assert.Equal(t, "tokenizer from "+snap, ran.Tokenizer)

	r := readRecord(t, l.record)
	require.NotNil(t, r.Repo)
	assert.Equal(t, "Qwen/Qwen3-0.6B", *r.Repo)
	assert.Equal(t, []report.InputFile{{What: "params", Path: "/et/examples/models/qwen3/config/0_6b_config.json"},
		{What: "tokenizer", Path: snap}, {What: "checkpoint", Path: snap}, {What: "checkpoint", Path: snap}}, r.Read,
		"the flagged file first, then each request the script made")
	require.NotNil(t, r.Calibration)
	c := *r.Calibration
	assert.Equal(t, []string{"wikitext"}, c.Tasks)
	assert.Equal(t, 1, c.Limit)
	assert.Nil(t, c.NumFewshot)
	assert.Equal(t, 2, c.Sequences)
	assert.Equal(t, 5, c.Tokens)
	assert.Equal(t, rowsDigest("[1, 2, 3]", "[40, 50]"), c.TokensSHA256)
	require.Len(t, c.Datasets, 1)
	d := c.Datasets[0]
	assert.Equal(t, "EleutherAI/wikitext_document_level", d.Path)
	assert.Equal(t, "wikitext-2-raw-v1", d.Name)
	assert.Nil(t, d.Revision)
	assert.Equal(t, map[string]report.CalibrationSplit{"test": {Rows: 2, Fingerprint: "fp-test"}, "train": {Rows: 1, Fingerprint: "fp-train"}}, d.Splits)
}

// TestQNNLaunchFlaggedFiles: a decoder that takes Meta's files by flag is not served; the
// record names the files the flags give.
func TestQNNLaunchFlaggedFiles(t *testing.T) {
	l := runLaunch(t, nil, "--decoder_model", "llama3_2-1b_instruct", "--calib_tasks", "wikitext",
		"--checkpoint", "/src/original/consolidated.00.pth", "--params", "/src/original/params.json",
		"--tokenizer_model", "/src/original/tokenizer.model")
	require.NoError(t, l.err, l.out)
	r := readRecord(t, l.record)
	assert.Nil(t, r.Repo)
	assert.Equal(t, []report.InputFile{{What: "checkpoint", Path: "/src/original/consolidated.00.pth"},
		{What: "params", Path: "/src/original/params.json"}, {What: "tokenizer", Path: "/src/original/tokenizer.model"}}, r.Read)
	require.NotNil(t, r.Calibration)
}

// TestQNNLaunchRefusals: a request for another repo stops the run before anything is
// loaded, and so do malformed command lines; none leaves a record.
func TestQNNLaunchRefusals(t *testing.T) {
	snap, ckpt := t.TempDir(), filepath.Join(t.TempDir(), "c.pth")
	tests := []struct {
		name   string
		own    []string
		script []string
		want   string
	}{
		{"another repo", []string{"--repo", "Other/Model", "--snapshot", snap, "--checkpoint", ckpt},
			[]string{"--decoder_model", "qwen3-0_6b"}, "the script asked for the tokenizer of Qwen/Qwen3-0.6B, and this export holds Other/Model"},
		{"half the serving flags", []string{"--repo", "Qwen/Qwen3-0.6B"},
			[]string{"--decoder_model", "qwen3-0_6b"}, "--repo, --snapshot and --checkpoint go together"},
		{"calibration window as long as the window", []string{"--calib-window", "2048"},
			[]string{"--decoder_model", "qwen3-0_6b", "--max_context_len", "2048"}, "--calib-window 2048 must be below the script's --max_context_len (2048)"},
		{"calibration window without a window", []string{"--calib-window", "2048"},
			[]string{"--decoder_model", "qwen3-0_6b"}, "--calib-window 2048 needs the window it calibrates for, and llama.py's arguments give no --max_context_len"},
		{"calibrate only, keeping nothing", []string{"--calibrate-only"},
			[]string{"--decoder_model", "qwen3-0_6b", "--max_context_len", "2048"}, "--calibrate-only needs --save-calibration FILE"},
		{"calibrate only at a calibration window", []string{"--calibrate-only", "--save-calibration", "c.pt", "--calib-window", "1024"},
			[]string{"--decoder_model", "qwen3-0_6b", "--max_context_len", "2048"}, "--calibrate-only calibrates at the script's --max_context_len; give the calibration window there, not as --calib-window"},
		{"load and save", []string{"--load-calibration", "a.pt", "--save-calibration", "b.pt"},
			[]string{"--decoder_model", "qwen3-0_6b", "--max_context_len", "4096"}, "--load-calibration calibrates nothing, so it takes neither --save-calibration nor --calib-window"},
		{"load at a calibration window", []string{"--load-calibration", "a.pt", "--calib-window", "2048"},
			[]string{"--decoder_model", "qwen3-0_6b", "--max_context_len", "4096"}, "--load-calibration calibrates nothing, so it takes neither --save-calibration nor --calib-window"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := runLaunch(t, tc.own, tc.script...)
			require.Error(t, l.err)
			assert.Contains(t, l.out, tc.want)
			assert.NoFileExists(t, l.record)
			assert.NoFileExists(t, ckpt)
		})
	}
	t.Run("no script arguments", func(t *testing.T) {
		dir := t.TempDir()
		_, err := WriteScripts(dir)
		require.NoError(t, err)
		out, err := exec.Command(anyPython(t), filepath.Join(dir, QNNLaunchScript), "--record", filepath.Join(dir, "r.json")).CombinedOutput()
		require.Error(t, err)
		assert.Contains(t, string(out), "qnn_launch: llama.py's arguments follow --")
	})
}
