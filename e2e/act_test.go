// Package e2e runs the generated workflows for real with nektos/act in host mode: the Hub
// is hubtest on loopback and ExecuTorch is the export's stand-in toolchain, which writes
// genuine .pte files. The package holds tests only.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/experimentalmachines/exe-expo/internal/cli"
	"github.com/experimentalmachines/exe-expo/internal/run"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// actVersion is the act release .ci/run installs; the flags below are its.
const actVersion = "v0.2.89"

// actLimit bounds one act run. It is a hang guard, not a timing assertion: a run on an
// idle machine takes about two minutes.
const actLimit = 25 * time.Minute

// needAct returns act's path, or skips (fails under EXE_EXPO_CI=1, where .ci/run installs it).
func needAct(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"act", filepath.Join(os.Getenv("HOME"), "go", "bin", "act")} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "nektos/act is not installed: go install github.com/nektos/act@" + actVersion
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatal("EXE_EXPO_CI=1 and " + msg)
	}
	t.Skip(msg)
	return ""
}

// repoRoot is the checkout this test belongs to.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

type skip struct {
	Window int    `json:"window"`
	Reason string `json:"reason"`
}

// TestExportWorkflowUnderAct runs the generated export-xnnpack.yml as a user's Run workflow
// would: plan → export of two windows, one of which this host cannot build (skipped for
// memory) → verify (smoke) → publish to hubtest. The published repo must hold the built
// window's file, config.json and card; the skipped window must be reported and absent.
func TestExportWorkflowUnderAct(t *testing.T) {
	act := needAct(t)
	needSmallHost(t)
	needTool(t, "jq")
	root := repoRoot(t)
	srv := hub(t)
	repo := gitRepo(t, root, "experimentalmachines/exe-expo")
	artifacts := t.TempDir()
	log := actRun{
		dir:      repo,
		workflow: ".github/workflows/export-xnnpack.yml",
		inputs:   map[string]string{"model_id": "Qwen/Qwen3-0.6B", "contexts": "2048," + strconv.Itoa(skipWindow), "publish": "true", "gptq": "false"},
		secrets:  map[string]string{"HF_TOKEN": "hf_e2etoken"},
		vars:     map[string]string{"EXE_EXPO_PYTHON": toolchain(t, root, pteEstimate(t, "Qwen/Qwen3-0.6B", 2048))},
		env:      map[string]string{"HF_ENDPOINT": srv.URL, "EXE_EXPO_ACT_ARTIFACTS": artifacts, "SMOKE_STANDIN": "answer"},
		repos:    standins(t, root),
	}.run(t, act, labels(t, root))

	const out = "experimentalmachines/Qwen3-0.6B-ExecuTorch"
	files := srv.Files(out, "main")
	assert.Contains(t, files, "xnnpack/Qwen3-0.6B-8da4w-2k.pte")
	assert.Contains(t, files, "xnnpack/config.json")
	assert.Contains(t, files, "README.md")
	for _, f := range files {
		assert.NotContains(t, f, "32k", "the skipped window was published")
	}
	card, err := srv.FileBytes(out, "main", "README.md")
	require.NoError(t, err)
	assert.Contains(t, string(card), "Qwen3-0.6B")
	assert.Contains(t, string(card), "\nlicense: apache-2.0\n", "the source card's license in the front matter")
	assert.Contains(t, string(card), "distributed under the same terms (apache-2.0).")
	assert.Regexp(t, "(?m)^- `xnnpack/` 32k: .*(memory|RAM|swap)", string(card), "the card says why the skipped window is missing")
	assert.Contains(t, string(card), `| passed ("Paris") with the chat template |`, "verify's smoke ran the source's chat template")
	assert.Contains(t, string(card), "## Speed", "the export job timed the file")
	assert.Contains(t, string(card), "on the export host, not a phone: ")
	cfgJSON, err := srv.FileBytes(out, "main", "xnnpack/config.json")
	require.NoError(t, err)
	assert.Contains(t, string(cfgJSON), `"context": 32768`, "config.json lists the skipped window")

	raw, ok := setOutput(log, "Verify", "skipped")
	require.True(t, ok, "verify set no skipped output:\n%s", tail(log, 60))
	var skipped []skip
	require.NoError(t, json.Unmarshal([]byte(raw), &skipped), raw)
	require.Len(t, skipped, 1, raw)
	assert.Equal(t, skipWindow, skipped[0].Window)
	assert.Regexp(t, `(?i)memory|RAM|swap`, skipped[0].Reason)
	passed, ok := setOutput(log, "Verify", "files")
	require.True(t, ok)
	assert.Equal(t, `["xnnpack/Qwen3-0.6B-8da4w-2k.pte"]`, passed)
	assert.NotContains(t, log, "hf_e2etoken", "the token reached the log")
}

// pteEstimate is plan's .pte size for the window, which the stand-in then writes, so that
// the verify job's size check sees a file built as sized.
func pteEstimate(t *testing.T, model string, window int) int64 {
	t.Helper()
	t.Setenv("EXE_EXPO_OFFLINE", "1")
	var out, errs bytes.Buffer
	code := cli.Main(context.Background(), []string{"plan", model, "--backend", "xnnpack", "--json"}, nil, &out, &errs)
	require.Equal(t, cli.ExitOK, code, errs.String())
	var p struct {
		Backends []struct {
			Windows []struct {
				Window int   `json:"window"`
				PTE    int64 `json:"pte_bytes_estimate"`
			} `json:"windows"`
		} `json:"backends"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &p))
	require.Len(t, p.Backends, 1)
	for _, w := range p.Backends[0].Windows {
		if w.Window == window {
			return w.PTE
		}
	}
	t.Fatalf("plan of %s has no %d window", model, window)
	return 0
}

// skipWindow is the window these tests expect this host to skip for memory; skipNeedGiB
// is about what its export needs (plan's host need for Qwen3-0.6B at 32k).
const (
	skipWindow  = 32768
	skipNeedGiB = 90
)

// needSmallHost skips on a host with enough memory to build the skip window, where the
// export would run instead of being skipped (any machine CI runs on has far less).
func needSmallHost(t *testing.T) {
	t.Helper()
	h, err := run.Host(t.TempDir())
	require.NoError(t, err)
	if h.MemTotalBytes+h.SwapTotalBytes > skipNeedGiB<<30 {
		t.Skipf("this host has %d GiB of memory and swap: it would build the %d-token window these tests expect it to skip", (h.MemTotalBytes+h.SwapTotalBytes)>>30, skipWindow)
	}
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("EXE_EXPO_CI") == "1" {
			t.Fatalf("EXE_EXPO_CI=1 and %s is not installed", name)
		}
		t.Skipf("%s is not installed", name)
	}
}
