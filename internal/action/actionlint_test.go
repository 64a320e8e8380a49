package action

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// lintWithActions lays out a repository holding this repository's action.yml files, its
// actionlint configuration and workflow, and lints the workflow: actionlint reads a local
// action's metadata only through a workflow that uses it.
func lintWithActions(t *testing.T, workflowYAML []byte) []*actionlint.Error {
	t.Helper()
	dir := t.TempDir()
	copies := map[string]string{"action.yml": "action.yml", ".github/actionlint.yaml": ".github/actionlint.yaml"}
	for _, name := range actionNames() {
		p := "actions/" + name + "/action.yml"
		copies[p] = p
	}
	for dst, src := range copies {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(src)))
		require.NoError(t, err)
		writeFile(t, filepath.Join(dir, filepath.FromSlash(dst)), data)
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	wf := filepath.Join(dir, ".github", "workflows", "uses-actions.yml")
	writeFile(t, wf, workflowYAML)
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	require.NoError(t, err)
	errs, err := l.LintFile(wf, nil)
	require.NoError(t, err)
	return errs
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func describe(errs []*actionlint.Error) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%d:%d: %s [%s]\n", e.Line, e.Column, e.Message, e.Kind)
	}
	return b.String()
}

// TestActionlint lints testdata/uses-actions.yml, a caller of every action with every
// input that reads every output: actionlint finds nothing.
func TestActionlint(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "uses-actions.yml"))
	require.NoError(t, err)
	errs := lintWithActions(t, data)
	assert.Empty(t, errs, describe(errs))
}

// TestActionlintCatches makes sure the lint above can fail: a misspelt input (of an action
// and of the root action), a missing required input and an output no action declares are
// each reported.
func TestActionlintCatches(t *testing.T) {
	errs := lintWithActions(t, []byte(`name: Bad caller
on: workflow_dispatch
permissions: {}
jobs:
  bad:
    runs-on: blacksmith-8vcpu-ubuntu-2404
    timeout-minutes: 5
    steps:
      - id: export
        uses: ./actions/export
        with:
          model-id: Qwen/Qwen3-1.7B
          backend: xnnpack
          contxt: 2048
      - uses: ./
        with:
          model-id: Qwen/Qwen3-1.7B
          backend: xnnpack
          window: 2048
          publsh: "true"
      - run: echo "$X"
        env:
          X: ${{ steps.export.outputs.pte }}
`))
	text := describe(errs)
	assert.Contains(t, text, `input "contxt" is not defined in action "exe-expo export"`)
	assert.Contains(t, text, `missing input "window" which is required by action "exe-expo export"`)
	assert.Contains(t, text, `input "publsh" is not defined in action "exe-expo: export one model window"`)
	assert.Contains(t, text, `property "pte" is not defined`)
}

// TestTestWorkflowSetsEveryInput keeps testdata/uses-actions.yml complete: each use of an
// action gives it every input it declares, so the lint covers all of them.
func TestTestWorkflowSetsEveryInput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "uses-actions.yml"))
	require.NoError(t, err)
	var wf struct {
		Jobs map[string]struct {
			Steps []stepYAML `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &wf))
	used := map[string]bool{}
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if !strings.HasPrefix(st.Uses, "./") {
				continue
			}
			path := filepath.Join(repoRoot, filepath.FromSlash(st.Uses), "action.yml")
			a := readAction(t, path)
			want, got := []string{}, []string{}
			for id := range a.Inputs {
				want = append(want, id)
			}
			for id := range st.With {
				got = append(got, id)
			}
			assert.ElementsMatch(t, want, got, "the inputs given to %s", st.Uses)
			used[st.Uses] = true
		}
	}
	for _, name := range actionNames() {
		assert.True(t, used["./actions/"+name], "testdata/uses-actions.yml does not use ./actions/%s", name)
	}
	assert.True(t, used["./"], "testdata/uses-actions.yml does not use the root action")
}

// TestReadmeExamplesLint: the copy-paste examples of README.md's section for users of the
// actions are valid workflows' jobs (actionlint knows nothing of the remote actions they
// use, so this checks their syntax and expressions, not their inputs).
func TestReadmeExamplesLint(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Using the actions from another repository\n")
	require.True(t, ok, "README.md has no section for users of the actions")
	section, _, _ = strings.Cut(section, "\n## ")
	examples := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1)
	require.Len(t, examples, 3, "the root action, one action at a time, the reusable workflow")
	for i, m := range examples {
		wf := "name: Example\non: workflow_dispatch\npermissions: {}\n" + m[1]
		errs := lintWithActions(t, []byte(wf))
		assert.Empty(t, errs, "example %d:\n%s", i+1, describe(errs))
	}
}
