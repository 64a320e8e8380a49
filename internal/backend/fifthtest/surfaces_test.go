package fifthtest_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	"github.com/experimentalmachines/exe-expo/internal/backend/fifthtest"
	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/publish"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/experimentalmachines/exe-expo/internal/workflow"
	"github.com/experimentalmachines/exe-expo/pkg/hub"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// root is the repository: its config/, workflows-src/ and actions/ are the generator's
// real input.
const root = "../../.."

func planOf(t *testing.T, cfg *config.Config, id string) (*plan.Plan, *model.Source) {
	t.Helper()
	src, _, err := source.Open(context.Background(), id, "", nil)
	require.NoError(t, err)
	return plan.Build(cfg, src, ""), src
}

// renders renders the repository's workflows as the generator does, by path.
func renders(t *testing.T) map[string][]byte {
	t.Helper()
	src, err := workflow.Load(root, workflow.CLICommands)
	require.NoError(t, err)
	files, err := workflow.Render(src)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Data
	}
	return out
}

// TestFifthBackendWorkflow: the generator renders an export workflow for npu5 from the
// same template as the others, and offers it to probe-runner (it is built for no chip);
// nothing else changes, and actionlint finds nothing wrong with the new workflow.
func TestFifthBackendWorkflow(t *testing.T) {
	with := renders(t)
	backend.Unregister(fifthtest.Name)
	without := renders(t)
	backend.Register(fifthtest.Backend)

	const file = workflow.OutputDir + "/export-npu5.yml"
	wf, ok := with[file]
	require.True(t, ok, "no %s among %d files", file, len(with))
	for _, want := range []string{`run-name: "Made-up NPU (test): `, "group: export-npu5-", "backend: npu5", "--qmode \"$QMODE\""} {
		assert.Contains(t, string(wf), want)
	}
	assert.NotContains(t, string(wf), "--soc", "built once, for no chip")
	var changed []string
	for p, data := range with {
		if old, ok := without[p]; !ok || string(old) != string(data) {
			changed = append(changed, p)
		}
	}
	assert.ElementsMatch(t, []string{file, workflow.OutputDir + "/probe-runner.yml"}, changed)
	assert.Len(t, with, len(without)+1)
	assert.Contains(t, string(with[workflow.OutputDir+"/probe-runner.yml"]), "          - npu5\n")

	for _, e := range lint(t, with) {
		if filepath.Base(e.Filepath) == filepath.Base(file) {
			t.Errorf("%s:%d:%d: %s [%s]", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind)
		}
	}
}

// lint runs actionlint (without shellcheck) over the rendered files laid out as a
// repository with its actions, so each `uses: ./actions/<name>` is checked against the
// real action's inputs.
func lint(t *testing.T, files map[string][]byte) []*actionlint.Error {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	actions, err := filepath.Glob(filepath.Join(root, "actions", "*", "action.yml"))
	require.NoError(t, err)
	all := map[string][]byte{}
	for _, p := range append(actions, filepath.Join(root, "action.yml")) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		all[filepath.ToSlash(rel)] = data
	}
	for p, data := range files {
		all[p] = data
	}
	for p, data := range all {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, data, 0o644))
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	require.NoError(t, err)
	errs, err := l.LintDir(filepath.Join(dir, filepath.FromSlash(workflow.OutputDir)), nil)
	require.NoError(t, err)
	return errs
}

// TestFifthBackendCard: publishing an npu5 export builds a model card that names it by its
// card title, says what its check verified and carries its license note, and a folder
// config.json for it.
func TestFifthBackendCard(t *testing.T) {
	o := exportOptions(t, "Qwen/Qwen3-0.6B", 2048)
	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	w, err := publish.Load(o.Out, res.ReportPath, "")
	require.NoError(t, err)
	assert.Same(t, fifthtest.Backend, w.Backend)
	assert.Equal(t, "npu5", w.Folder)

	srv := hubtest.New(t)
	c := hub.New(hub.Options{Endpoint: srv.URL, Token: "hf_test", RetryMax: 1})
	p, err := publish.DryRun(context.Background(), c, w)
	require.NoError(t, err)
	for _, want := range []string{
		"| " + fifthtest.CardTitle + " |", fifthtest.Verified,
		"The `npu5/` folders hold files for a made-up NPU, built by the test stand-in of ExecuTorch " + pinned.Version() + ".",
		"- npu5\n",
	} {
		assert.Contains(t, p.Card, want)
	}
	var folder publish.BackendConfig
	for _, f := range p.Add {
		if f.PathInRepo == "npu5/config.json" {
			require.NoError(t, json.Unmarshal(f.Content, &folder))
		}
	}
	assert.Equal(t, "npu5", folder.Backend)
	require.Len(t, folder.Variants, 1)
	assert.Equal(t, "Qwen3-0.6B-npu5-8da4w-2k.pte", folder.Variants[0].File)
	assert.True(t, strings.HasPrefix(p.Summary, "npu5 2k: "), p.Summary)
}
