package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/pkg/drivers"
	"github.com/experimentalmachines/exe-expo/pkg/gate"
	"github.com/experimentalmachines/exe-expo/pkg/report"
	"github.com/experimentalmachines/exe-expo/pkg/verify"
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
