package audit

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// toolchainJSON is what the stand-in python says it has installed: all the gate needs.
const toolchainJSON = `{"executorch": "1.4.0", "torch": "2.13.0", "torchao": "0.18.0", "transformers": "5.0.0rc1"}`

// standinPython is a "python" that answers the toolchain probe with toolchainJSON and
// runs testdata/probe_standin.py in the place of gate_probe.py; skipped without python3.
func standinPython(t *testing.T) string {
	t.Helper()
	py3, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "probe_standin.py"))
	require.NoError(t, err)
	py := filepath.Join(t.TempDir(), "python")
	body := "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then echo '" + toolchainJSON + "'; exit 0; fi\nshift\nexec " + py3 + " " + script + "\n"
	require.NoError(t, os.WriteFile(py, []byte(body), 0o755))
	return py
}

// fakeSource stands in for the Hub's download of the source: it records what it was
// asked for and writes a config.json, which is all the probe stand-in reads.
type fakeSource struct{ fetched []string }

func (f *fakeSource) Fetch(_ context.Context, id, revision, dir string, weights bool) (*model.Source, error) {
	f.fetched = append(f.fetched, id+"@"+revision+map[bool]string{true: " with weights", false: ""}[weights])
	return nil, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
}

const (
	sourceID = "HuggingFaceTB/SmolLM2-360M-Instruct"
	repo     = "experimentalmachines/SmolLM2-360M-Instruct-ExecuTorch"
)

// publishedHub is a local Hub holding the output repo of sourceID, with two XNNPACK
// windows and a Vulkan file.
func publishedHub(t *testing.T) *hub.Client {
	t.Helper()
	srv := hubtest.New(t)
	srv.MustAddModel(t, repo, map[string][]byte{
		"xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte": []byte("program 2k"),
		"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte": []byte("program 4k"),
		"vulkan/SmolLM2-360M-Instruct-8da4w-4k.pte":  []byte("vulkan"),
		"tokenizer.json": []byte("{}"),
	})
	return hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true})
}

// TestRun audits the published files of a local Hub with the probe stand-in: the file
// picked by window, the source downloaded with its weights, the fp32 reference made and
// the file measured against it, and the quality block's figures.
func TestRun(t *testing.T) {
	py := standinPython(t)
	c := publishedHub(t)
	for _, tc := range []struct {
		name, p string
		window  int
		passed  bool
		file    string
	}{
		{"first file, passes", "0.85", 0, true, "xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte"},
		{"the 4k window, fails", "0.1", 4096, false, "xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "probe.log")
			t.Setenv("PROBE_LOG", log)
			t.Setenv("PROBE_P", tc.p)
			work := filepath.Join(t.TempDir(), "work")
			src := &fakeSource{}
			ready := 0
			res, err := Run(context.Background(), Options{Source: sourceID, Backend: "xnnpack", Window: tc.window,
				Work: work, Python: py, Hub: c, Fetcher: src, Ready: func() { ready++ }})
			require.NoError(t, err, "a file the gate refuses is no error")
			assert.Equal(t, 1, ready)
			assert.Equal(t, []string{sourceID + "@main with weights"}, src.fetched)
			assert.Equal(t, sourceID, res.Source)
			assert.Equal(t, repo, res.Repo)
			assert.Equal(t, tc.file, res.File)
			assert.NotEmpty(t, res.Revision)
			assert.Equal(t, 12, res.Gate.Graded)
			assert.Equal(t, tc.passed, res.Gate.Passed)
			// The quality block: the gate's figures and the fidelity text's, KL(fp32 || export)
			// over the buckets: 0.9 log(0.9/p) + 0.1 log(0.1/(1-p)).
			q := res.Quality
			assert.True(t, q.Measured)
			assert.Equal(t, res.Gate.Passed, q.GatePassed)
			assert.Equal(t, 12, q.GateGraded)
			assert.InDelta(t, 0.9, q.GateFP32Mean, 1e-9)
			require.NotNil(t, q.Fidelity, "the audit's reference has the fidelity text")
			assert.Equal(t, 2048, q.Fidelity.Positions, "gate.fidelity_tokens")
			assert.Equal(t, "fidelity-text.txt", q.Fidelity.Text.File)
			pe := map[string]float64{"0.85": 0.85, "0.1": 0.1}[tc.p]
			assert.InDelta(t, 0.9*math.Log(0.9/pe)+0.1*math.Log(0.1/(1-pe)), q.Fidelity.MeanKL, 1e-9)
			assert.Equal(t, map[bool]float64{true: 1, false: 0}[pe > 0.5], q.Fidelity.NextTokenAgreement)
			got, err := os.ReadFile(filepath.Join(work, "published", filepath.Base(tc.file)))
			require.NoError(t, err)
			assert.Equal(t, "program "+map[string]string{"0.85": "2k", "0.1": "4k"}[tc.p], string(got))
			probes, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.Equal(t, "reference hf source\nmeasure pte "+filepath.Base(tc.file)+"\n", string(probes))
			assert.FileExists(t, filepath.Join(work, "gate.json"))
		})
	}
}

// TestRunRefuses: a request the audit cannot serve fails with a sentence, the option
// refusals (*InputError) before the configuration is read or anything downloaded.
func TestRunRefuses(t *testing.T) {
	py := standinPython(t)
	c := publishedHub(t)
	long := "org/" + strings.Repeat("a", 90)
	for _, tc := range []struct {
		name  string
		edit  func(o *Options)
		field Field // "" for an error that is no refusal of an option
		want  string
	}{
		{"no such window", func(o *Options) { o.Window = 8192 }, "",
			repo + " publishes no xnnpack file for a 8192-token window (*-8k.pte); it has xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte, xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"},
		{"a backend the runner cannot run", func(o *Options) { o.Backend = "vulkan" }, FieldBackend,
			"Backend vulkan: the gate runs files on ExecuTorch's x86 runner, which runs only xnnpack files"},
		{"an unknown backend", func(o *Options) { o.Backend = "coreml" }, FieldBackend, "Backend coreml: "},
		{"a negative window", func(o *Options) { o.Window = -2048 }, FieldWindow,
			"Window -2048: a window is a positive number of tokens (0: the first file)"},
		{"a source that is no Hub id", func(o *Options) { o.Source = "../X" }, FieldSource,
			`Source "../X" is not a Hub repo id (` + model.IDRule + ")"},
		{"a name too long for its output repo", func(o *Options) { o.Source = long }, "",
			`the output repo "experimentalmachines/` + strings.Repeat("a", 90) + `-ExecuTorch" is not a Hub repo id`},
		{"a missing configuration", func(o *Options) { o.ConfigDir = filepath.Join(t.TempDir(), "none") }, "", "pipeline.yaml"},
		{"no Hub client", func(o *Options) { o.Hub = nil }, "", "the audit has no Hub client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{}
			o := Options{Source: sourceID, Backend: "xnnpack", Work: t.TempDir(), Python: py, Hub: c, Fetcher: src}
			if tc.field != "" || tc.name != "no such window" {
				o.Ready = func() { t.Error("Ready called for a refused request") }
			}
			tc.edit(&o)
			_, err := Run(context.Background(), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var in *InputError
			assert.Equal(t, tc.field != "", errors.As(err, &in), "an *InputError")
			if in != nil {
				assert.Equal(t, tc.field, in.Field)
			}
			assert.Empty(t, src.fetched, "nothing downloaded")
		})
	}
}

// TestInputErrorSentence: a refusal names its options as the caller words them.
func TestInputErrorSentence(t *testing.T) {
	_, err := Run(context.Background(), Options{Source: sourceID, Backend: "qnn", Hub: &hub.Client{}, Fetcher: &fakeSource{}})
	var in *InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, "--backend qnn: the gate runs files on ExecuTorch's x86 runner, which runs only xnnpack files",
		in.Sentence(func(f Field) string { return "--" + strings.ToLower(string(f)) }))
}

// TestRunGradesInt8CacheByName: audit reads a published file's cache from its name, so a
// -kv8- file whose deep positions drift past gate.max_deep_mean_kl (0.05) fails while an
// fp32-cache file with the same figures passes. At p = 0.75 the rows pass and the mean KL
// at every position is 0.9 ln(0.9/0.75) + 0.1 ln(0.1/0.25) = 0.073.
func TestRunGradesInt8CacheByName(t *testing.T) {
	py := standinPython(t)
	srv := hubtest.New(t)
	srv.MustAddModel(t, repo, map[string][]byte{
		"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte":     []byte("fp32 cache"),
		"xnnpack/SmolLM2-360M-Instruct-8da4w-kv8-8k.pte": []byte("int8 cache"),
		"tokenizer.json": []byte("{}"),
	})
	c := hub.New(hub.Options{Endpoint: srv.URL, NoEnvToken: true})
	for _, tc := range []struct {
		name   string
		window int
		passed bool
	}{
		{"fp32 cache, deep positions not graded", 4096, true},
		{"int8 cache, deep positions drift", 8192, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PROBE_LOG", filepath.Join(t.TempDir(), "probe.log"))
			t.Setenv("PROBE_P", "0.75")
			res, err := Run(context.Background(), Options{Source: sourceID, Backend: "xnnpack", Window: tc.window,
				Work: filepath.Join(t.TempDir(), "work"), Python: py, Hub: c, Fetcher: &fakeSource{}})
			require.NoError(t, err)
			require.NotNil(t, res.Gate.Fidelity)
			require.NotNil(t, res.Gate.Fidelity.Deep)
			assert.InDelta(t, 0.073, res.Gate.Fidelity.Deep.MeanKL, 1e-3)
			assert.Equal(t, tc.passed, res.Gate.Passed, "problems: %v", res.Gate.Problems)
			if !tc.passed {
				require.Len(t, res.Gate.Problems, 1)
				assert.Contains(t, res.Gate.Problems[0], "the int8 KV cache drifts")
			}
		})
	}
}
