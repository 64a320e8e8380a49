package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/verify"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// runEnv is run on env, whose Hub and Fetcher stand in for the real ones.
func runEnv(t *testing.T, env Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env.Ctx, env.Stdin, env.Stdout, env.Stderr = context.Background(), strings.NewReader(""), &out, &errb
	code := mainWith(env, args)
	return code, out.String(), errb.String()
}

// sourceStandin stands in for the Hub's downloads of a source model: it records the ids
// and writes a config.json, all the probe stand-in reads.
type sourceStandin struct{ fetched []string }

func (s *sourceStandin) Source(_ context.Context, id, _ string) (*model.Source, model.Files, error) {
	return nil, nil, errors.New("the stand-in reads no metadata: " + id)
}

func (s *sourceStandin) Fetch(_ context.Context, id, _, dir string, _ bool) (*model.Source, error) {
	s.fetched = append(s.fetched, id)
	return nil, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
}

// TestAuditCommand runs `exe-expo audit` on a local Hub with internal/audit's gate probe
// stand-in, the source downloaded through the Env's Fetcher: the report on stdout, the
// verdict on stderr, and exit 2 for a file the gate refuses. What the audit measures is
// internal/audit's to test.
func TestAuditCommand(t *testing.T) {
	py3, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	standin, err := filepath.Abs(filepath.Join("..", "audit", "testdata", "probe_standin.py"))
	require.NoError(t, err)
	dir := t.TempDir()
	py := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(py, []byte(probeAnswer(toolchainJSON)+"shift\nexec "+py3+" "+standin+"\n"), 0o755))
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	repo := "experimentalmachines/SmolLM2-360M-Instruct-ExecuTorch"
	srv.MustAddModel(t, repo, map[string][]byte{
		"xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte": []byte("program 2k"),
		"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte": []byte("program 4k"),
		"vulkan/SmolLM2-360M-Instruct-8da4w-4k.pte":  []byte("vulkan"),
		"tokenizer.json": []byte("{}"),
	})
	src := &sourceStandin{}
	env := Env{Fetcher: src}

	for _, tc := range []struct {
		name, p string
		args    []string
		code    int
		file    string
	}{
		{"first file, passes", "0.85", nil, ExitOK, "xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte"},
		{"the 4k window, fails", "0.1", []string{"--context", "4096"}, ExitFailed, "xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PROBE_LOG", filepath.Join(t.TempDir(), "probe.log"))
			t.Setenv("PROBE_P", tc.p)
			work := filepath.Join(t.TempDir(), "work")
			args := append([]string{"audit", "HuggingFaceTB/SmolLM2-360M-Instruct", "--python", py, "--work", work}, tc.args...)
			code, out, errs := runEnv(t, env, args...)
			require.Equal(t, tc.code, code, errs)
			var res verify.AuditResult
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			assert.Equal(t, repo, res.Repo)
			assert.Equal(t, tc.file, res.File)
			assert.Equal(t, tc.code == ExitOK, res.Gate.Passed)
			assert.Contains(t, errs, tc.file+": "+res.Gate.Verdict()+"\n")
			assert.FileExists(t, filepath.Join(work, "gate.json"))
		})
	}
	assert.Equal(t, []string{"HuggingFaceTB/SmolLM2-360M-Instruct", "HuggingFaceTB/SmolLM2-360M-Instruct"}, src.fetched)

	for _, tc := range []struct {
		name string
		args []string
		errs string
	}{
		{"no such window", []string{"--context", "8192"}, "publishes no xnnpack file for a 8192-token window (*-8k.pte); it has xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte, xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"},
		{"a backend the runner cannot run", []string{"--backend", "vulkan"}, "audit: --backend vulkan: the gate runs files on ExecuTorch's x86 runner, which runs only xnnpack files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"audit", "HuggingFaceTB/SmolLM2-360M-Instruct", "--python", py, "--work", t.TempDir()}, tc.args...)
			code, _, errs := runEnv(t, env, args...)
			assert.Equal(t, ExitFailed, code)
			assert.Contains(t, errs, tc.errs)
		})
	}
}
