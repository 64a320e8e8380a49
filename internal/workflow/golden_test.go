package workflow

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/golden"
)

// TestCommittedFilesAreTheRender: the committed .github files are the golden files of the
// render with today's CLI; -update (internal/golden's flag) regenerates them, as `go run
// ./generator` does.
func TestCommittedFilesAreTheRender(t *testing.T) {
	files, err := Render(sourceOf(t, CLICommands, nil))
	require.NoError(t, err)
	changes, err := Compare(root, files)
	require.NoError(t, err)
	if golden.Update() {
		require.NoError(t, Apply(root, changes))
		return
	}
	for _, c := range changes {
		assert.Failf(t, "a committed file differs from the render", "run `go run ./generator` (or go test -update):\n%s", c.UnifiedDiff())
	}
	for _, want := range []string{"export-xnnpack.yml", "export-vulkan.yml", "export-qnn.yml", "export-mediatek.yml", "probe-runner.yml", "ci.yml"} {
		assert.FileExists(t, filepath.Join(root, OutputDir, want))
	}
}

// TestGoldenWithEveryCommand pins the render once the CLI has every command (the solve and
// publish jobs, the watcher and the audit), so a change to those templates shows in review
// before the commands land.
func TestGoldenWithEveryCommand(t *testing.T) {
	files := rendered(t, sourceOf(t, everyCommand, nil))
	dir := filepath.Join("testdata", "every-command")
	if golden.Update() {
		// a template that no longer renders a file takes its golden away
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	for p, data := range files {
		golden.Check(t, filepath.Join(dir, path.Base(p)), data)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, len(files), "testdata/every-command holds a file no render makes")
}

// TestRenderIsDeterministic: two renders from separately loaded sources are byte-identical.
func TestRenderIsDeterministic(t *testing.T) {
	first, err := Render(sourceOf(t, everyCommand, nil))
	require.NoError(t, err)
	second, err := Render(sourceOf(t, everyCommand, nil))
	require.NoError(t, err)
	assert.Equal(t, first, second)
	for _, f := range first {
		assert.Regexp(t, "^"+Marker+" from config/pipeline.yaml", string(f.Data), f.Path)
		assert.NotContains(t, string(f.Data), "\r", f.Path)
		assert.NotContains(t, string(f.Data), " \n", "%s has trailing blanks", f.Path)
	}
}
