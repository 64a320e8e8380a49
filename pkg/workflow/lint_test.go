package workflow

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
