package verify_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/drivers"
	"github.com/experimentalmachines/exe-expo/internal/gate"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/internal/verify"
)

// export writes an export folder: the report, its files of the given sizes and a tokenizer.
func export(t *testing.T, backend string, estimate int64, files map[string]int) (out, path string) {
	t.Helper()
	out = t.TempDir()
	rep := &report.Report{Backend: backend, Tokenizer: "tokenizer.json", Source: report.Source{TotalParams: 751_632_384},
		Estimates: report.Estimates{PTEBytesEstimate: estimate}}
	for name, n := range files {
		p := filepath.Join(out, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, make([]byte, n), 0o644))
		rep.Files = append(rep.Files, report.File{Path: name, Bytes: int64(n)})
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, "tokenizer.json"), []byte("{}"), 0o644))
	path = filepath.Join(out, backend, report.Name("2k"))
	require.NoError(t, report.Write(path, rep))
	return out, path
}

func standinRunner(t *testing.T, mode string) drivers.Runner {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	standin, err := filepath.Abs(filepath.Join("..", "drivers", "testdata", "smoke_standin"))
	require.NoError(t, err)
	return drivers.Runner{Python: py, Dir: t.TempDir(), Env: []string{"PYTHONPATH=" + standin, "SMOKE_STANDIN=" + mode}}
}

// TestSmokeWritesVerdicts: XNNPACK files get the size check and a smoke run (through the
// stand-in runner), Vulkan files the size check only; each verdict lands in the report.
func TestSmokeWritesVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, backend, mode string
		estimate            int64
		size, smoke, passed bool
		blocker             string
	}{
		{"xnnpack as sized, answers", "xnnpack", "answer", 1000, true, true, true, ""},
		{"xnnpack 30% over its estimate", "xnnpack", "answer", 770, false, true, false, "size check failed: the files are 1000 bytes, +29.9% off"},
		{"xnnpack degenerate", "xnnpack", "repeat", 1000, true, false, false, "smoke test failed: the reply is degenerate"},
		{"vulkan: size check only", "vulkan", "raise", 1000, true, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, path := export(t, tc.backend, tc.estimate, map[string]int{tc.backend + "/m.pte": 1000})
			rep, err := verify.Smoke(context.Background(), standinRunner(t, tc.mode), out, "", path)
			require.NoError(t, err)
			back, err := report.Read(path)
			require.NoError(t, err)
			assert.Equal(t, rep.SizeCheck, back.SizeCheck)
			require.NotNil(t, back.SizeCheck)
			assert.Equal(t, tc.size, back.SizeCheck.Passed)
			if tc.backend == "xnnpack" {
				require.NotNil(t, back.Smoke)
				assert.Equal(t, tc.smoke, back.Smoke.Passed)
			} else {
				assert.Nil(t, back.Smoke, "the runner has no GPU")
			}
			blockers := back.Blockers()
			if tc.passed {
				assert.Empty(t, blockers)
				return
			}
			require.NotEmpty(t, blockers)
			assert.Contains(t, blockers[0], tc.blocker)
			assert.Contains(t, verify.Summary(path, back), "  not publishable: "+blockers[0])
		})
	}
}

func TestReports(t *testing.T) {
	out, path := export(t, "xnnpack", 1000, map[string]int{"xnnpack/m.pte": 1000})
	got, err := verify.Reports(out, "")
	require.NoError(t, err)
	assert.Equal(t, []string{path}, got)
	_, err = verify.Reports(out, "vulkan")
	assert.EqualError(t, err, out+" holds no export report (vulkan's export-report-*.json in a backend folder)")
	// per-chip backends keep their reports a folder deeper (qnn/sm8750/), and the report,
	// not the folder, names the backend
	chip := filepath.Join(out, "qnn", "sm8750", report.Name("2k"))
	require.NoError(t, os.MkdirAll(filepath.Dir(chip), 0o755))
	require.NoError(t, report.Write(chip, &report.Report{Backend: "qnn"}))
	got, err = verify.Reports(out, "qnn")
	require.NoError(t, err)
	assert.Equal(t, []string{chip}, got)
	got, err = verify.Reports(out, "")
	require.NoError(t, err)
	assert.Equal(t, []string{chip, path}, got)
	_, err = verify.Reports(out, "tpu")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown backend "tpu"`)
}

// TestReferenceReusedOnlyForTheSamePrompt: gate.json made with another prompt file is
// refused, not silently compared.
func TestReferenceReusedOnlyForTheSamePrompt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gate.json")
	ref := gate.Reference{Rows: map[string]gate.Token{"q": {Token: 3, P: 0.9}}, Confident: []string{"q"},
		Prompt: gate.PromptID{File: "a.json", SHA256: "aa"}}
	b, err := json.Marshal(ref)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	g := verify.Gate{PromptID: gate.PromptID{File: "a.json", SHA256: "aa"}}
	got, err := g.Reference(context.Background(), drivers.Runner{Python: "/nonexistent/python"}, path)
	require.NoError(t, err, "an existing reference is read, not remade")
	assert.Equal(t, ref, got)
	g.PromptID = gate.PromptID{File: "b.json", SHA256: "bb"}
	_, err = g.Reference(context.Background(), drivers.Runner{Python: "/nonexistent/python"}, path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was made with prompt file a.json (sha256 aa), not b.json (sha256 bb)")
}

// TestReferenceReusedOnlyForTheSameFidelityText: gate.json whose fidelity part was made
// with another text, token count or top k is refused; one made before the text was
// configured is read (the gate then records why it has no fidelity figures).
func TestReferenceReusedOnlyForTheSameFidelityText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gate.json")
	id := gate.PromptID{File: "a.json", SHA256: "aa"}
	fid := &gate.FidelityReference{Text: gate.TextID{File: "t.txt", SHA256: "tt"}, TopK: 1, Tokens: []int{5, 6},
		Positions: []gate.RefPosition{{IDs: []int{6}, LogP: []float64{0}}, {IDs: []int{7}, LogP: []float64{-0.5}, Rest: 1 - math.Exp(-0.5)}}}
	write := func(ref gate.Reference) {
		b, err := json.Marshal(ref)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	noPython := drivers.Runner{Python: "/nonexistent/python"}
	text := &gate.FidelityText{ID: gate.TextID{File: "t.txt", SHA256: "tt"}, Tokens: 2, TopK: 1}
	g := verify.Gate{PromptID: id, Fidelity: text}

	write(gate.Reference{Rows: map[string]gate.Token{}, Prompt: id, Fidelity: fid})
	got, err := g.Reference(context.Background(), noPython, path)
	require.NoError(t, err)
	assert.Equal(t, fid, got.Fidelity)

	for _, other := range []gate.FidelityText{
		{ID: gate.TextID{File: "u.txt", SHA256: "uu"}, Tokens: 2, TopK: 1},
		{ID: text.ID, Tokens: 3, TopK: 1},
		{ID: text.ID, Tokens: 2, TopK: 4},
	} {
		g.Fidelity = &other
		_, err = g.Reference(context.Background(), noPython, path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "was made with fidelity text t.txt (sha256 tt), 2 tokens, top 1, not ")
		assert.Contains(t, err.Error(), "remove it to make a new reference")
	}

	g.Fidelity = text
	write(gate.Reference{Rows: map[string]gate.Token{}, Prompt: id})
	got, err = g.Reference(context.Background(), noPython, path)
	require.NoError(t, err, "a reference from before the fidelity text is still read")
	assert.Nil(t, got.Fidelity)

	broken := *fid
	broken.Positions = []gate.RefPosition{{IDs: []int{6}, LogP: []float64{-1}}, fid.Positions[1]}
	write(gate.Reference{Rows: map[string]gate.Token{}, Prompt: id, Fidelity: &broken})
	_, err = g.Reference(context.Background(), noPython, path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fidelity reference position 0: the buckets' probabilities sum to 0.367879441, not 1")
}

// TestMeasureRecordsNotMeasured: a file the x86 runner cannot run gets no gate, and its
// report's quality block says why instead of a number.
func TestMeasureRecordsNotMeasured(t *testing.T) {
	for backend, title := range map[string]string{"vulkan": "Vulkan (GPU)", "qnn": "Qualcomm QNN (HTP)"} {
		out, path := export(t, backend, 1000, map[string]int{backend + "/m.pte": 1000})
		rep, err := verify.Gate{}.Measure(context.Background(), drivers.Runner{Python: "/nonexistent/python"}, out, path, gate.Reference{})
		require.NoError(t, err)
		back, err := report.Read(path)
		require.NoError(t, err)
		assert.Equal(t, rep.Quality, back.Quality)
		assert.Nil(t, back.Gate)
		require.NotNil(t, back.Quality)
		assert.False(t, back.Quality.Measured)
		assert.Equal(t, "not measured here: "+title+" needs a phone", back.Quality.NotMeasured)
		assert.Contains(t, verify.Summary(path, back), "  quality: not measured here: "+title+" needs a phone")
	}
}

// TestMeasureKeepsSimulated: the simulated figure a QNN export measured on its QDQ program
// survives the verify step's "not measured here", and the summary gives it labelled.
func TestMeasureKeepsSimulated(t *testing.T) {
	out, path := export(t, "qnn", 1000, map[string]int{"qnn/m.pte": 1000})
	rep, err := report.Read(path)
	require.NoError(t, err)
	sim := &gate.SimulatedFidelity{By: gate.QDQOnCPU, Fidelity: gate.Fidelity{Text: gate.TextID{File: "fidelity-text.txt", SHA256: "ab"},
		Positions: 2048, TopK: 32, Agreed: 1907, NextTokenAgreement: 1907.0 / 2048, MeanKL: 0.0123, MaxKL: 0.5}}
	rep.Quality = &gate.Quality{Simulated: sim}
	require.NoError(t, report.Write(path, rep))

	_, err = verify.Gate{}.Measure(context.Background(), drivers.Runner{Python: "/nonexistent/python"}, out, path, gate.Reference{})
	require.NoError(t, err)
	back, err := report.Read(path)
	require.NoError(t, err)
	require.NotNil(t, back.Quality)
	assert.False(t, back.Quality.Measured)
	assert.Equal(t, "not measured here: Qualcomm QNN (HTP) needs a phone", back.Quality.NotMeasured)
	assert.Equal(t, sim, back.Quality.Simulated)
	assert.Contains(t, verify.Summary(path, back),
		"  quality: simulated on the CPU (QDQ program, not the HTP): next token 93.1% of 2,048, mean KL 0.012; not measured here: Qualcomm QNN (HTP) needs a phone")

	// A window too long to simulate keeps the export's reason.
	const why = "not simulated: the QDQ program computes all 8,192 positions in one call"
	rep.Quality = &gate.Quality{SimulatedMissing: why}
	require.NoError(t, report.Write(path, rep))
	_, err = verify.Gate{}.Measure(context.Background(), drivers.Runner{Python: "/nonexistent/python"}, out, path, gate.Reference{})
	require.NoError(t, err)
	back, err = report.Read(path)
	require.NoError(t, err)
	assert.Nil(t, back.Quality.Simulated)
	assert.Equal(t, why, back.Quality.SimulatedMissing)
	assert.Equal(t, "not measured here: Qualcomm QNN (HTP) needs a phone", back.Quality.NotMeasured)
}
