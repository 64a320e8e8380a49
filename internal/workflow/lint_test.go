package workflow

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
)

// lint runs actionlint, as a library with shellcheck on the run: scripts, over files laid
// out as a repository (actionlint reads .github/actionlint.yaml from the project root).
func lint(t *testing.T, files map[string][]byte) []*actionlint.Error {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	for p, data := range localActions(t) {
		if _, ok := files[p]; !ok {
			files[p] = data
		}
	}
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, data, 0o644))
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: needTool(t, "shellcheck")})
	require.NoError(t, err)
	errs, err := l.LintDir(filepath.Join(dir, filepath.FromSlash(OutputDir)), nil)
	require.NoError(t, err)
	return errs
}

// localActions are the repository's action.yml files (the root action and actions/*/), so
// actionlint checks each workflow's `uses: ./actions/<name>` inputs against the real ones.
func localActions(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "actions", "*", "action.yml"))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, p := range append(paths, filepath.Join(root, "action.yml")) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		out[filepath.ToSlash(rel)] = data
	}
	return out
}

// TestLocalActionsExist holds every `uses: ./path` of every workflow, in every render, to
// an action.yml in this repository: the seed referenced a missing setup-export three times.
func TestLocalActionsExist(t *testing.T) {
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s+\./(\S+)`)
	seen := 0
	for _, commands := range []func(string) bool{CLICommands, everyCommand} {
		for p, data := range workflows(rendered(t, sourceOf(t, commands, nil))) {
			for _, m := range uses.FindAllStringSubmatch(string(data), -1) {
				seen++
				assert.FileExists(t, filepath.Join(root, filepath.FromSlash(m[1]), "action.yml"), "%s uses ./%s", p, m[1])
			}
		}
	}
	assert.NotZero(t, seen, "no workflow uses a local action: the pattern no longer matches")
}

func describe(errs []*actionlint.Error) string {
	s := ""
	for _, e := range errs {
		s += fmt.Sprintf("%s:%d:%d: %s [%s]\n", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind)
	}
	return s
}

// TestActionlintReportsNothing lints every workflow as committed and as rendered once the
// CLI has every command the templates may run.
func TestActionlintReportsNothing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		commands func(string) bool
	}{
		{"today's CLI", CLICommands},
		{"every command", everyCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := rendered(t, sourceOf(t, tc.commands, nil))
			require.NotEmpty(t, workflows(files))
			errs := lint(t, files)
			assert.Empty(t, errs, describe(errs))
		})
	}
}

// TestActionlintCatches makes sure the lint above can fail: a runner label outside
// pipeline.yaml's tiers and a shell mistake are both reported.
func TestActionlintCatches(t *testing.T) {
	files := rendered(t, sourceOf(t, CLICommands, nil))
	files[OutputDir+"/bad.yml"] = []byte(`name: Bad
on: push
permissions: {}
jobs:
  bad:
    runs-on: blacksmith-64vcpu-ubuntu-2404
    timeout-minutes: 5
    steps:
      - run: echo $UNQUOTED
`)
	kinds := map[string]bool{}
	for _, e := range lint(t, files) {
		kinds[e.Kind] = true
	}
	assert.True(t, kinds["runner-label"], "an unknown runner label was not reported")
	assert.True(t, kinds["shellcheck"], "an unquoted variable was not reported by shellcheck")
}

// TestActionlintChecksLocalActionInputs makes sure the lint reads the repository's
// action.yml files: an input setup-export does not declare is reported.
func TestActionlintChecksLocalActionInputs(t *testing.T) {
	files := rendered(t, sourceOf(t, CLICommands, nil))
	p := OutputDir + "/export-xnnpack.yml"
	files[p] = []byte(strings.Replace(string(files[p]), "          backend: xnnpack\n", "          backend: xnnpack\n          no-such-input: x\n", 1))
	found := false
	for _, e := range lint(t, files) {
		found = found || strings.Contains(e.Message, "no-such-input")
	}
	assert.True(t, found, "an undeclared input of ./actions/setup-export was not reported")
}
