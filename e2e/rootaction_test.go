package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consumer is another repository's workflow that reuses the root action, once for a window
// this host builds and publishes, once for one it cannot build.
const consumer = `name: Consumer
on: workflow_dispatch
permissions: {}
jobs:
  export:
    runs-on: blacksmith-8vcpu-ubuntu-2404-arm
    strategy:
      matrix:
        window: ["2048", "32768"]
    steps:
      - name: Export with exe-expo
        id: exe
        uses: experimentalmachines/exe-expo@v1
        with:
          model-id: Qwen/Qwen3-0.6B
          backend: xnnpack
          window: ${{ matrix.window }}
          publish: "true"
          python: ${{ vars.EXE_EXPO_PYTHON }}
          free-disk: "false"
          hf-token: ${{ secrets.HF_TOKEN }}
      - name: Report
        env:
          WINDOW: ${{ matrix.window }}
          SKIPPED: ${{ steps.exe.outputs.skipped }}
          REASON: ${{ steps.exe.outputs.reason }}
          FILES: ${{ steps.exe.outputs.files }}
          REPO: ${{ steps.exe.outputs.repo }}
        run: echo "RESULT window=$WINDOW skipped=$SKIPPED files=$FILES repo=$REPO reason=$REASON"
`

// TestRootActionFromAnotherRepository runs the root action as another repository would
// (uses: experimentalmachines/exe-expo@v1, mapped by act to this tree): the window this host
// can build is exported, checked and published to hubtest; the one it cannot is a skip
// with its reason, not a failure.
func TestRootActionFromAnotherRepository(t *testing.T) {
	act := needAct(t)
	needSmallHost(t)
	root := repoRoot(t)
	srv := hub(t)
	action := gitRepo(t, root, "experimentalmachines/exe-expo")
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".github", "workflows"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".github", "workflows", "consumer.yml"), []byte(consumer), 0o644))
	initRepo(t, repo, "someone/consumer")
	repos := standins(t, root)
	repos["experimentalmachines/exe-expo@v1"] = action
	log := actRun{
		dir:      repo,
		workflow: ".github/workflows/consumer.yml",
		secrets:  map[string]string{"HF_TOKEN": "hf_e2etoken"},
		vars:     map[string]string{"EXE_EXPO_PYTHON": toolchain(t, root, pteEstimate(t, "Qwen/Qwen3-0.6B", 2048))},
		env:      map[string]string{"HF_ENDPOINT": srv.URL, "SMOKE_STANDIN": "answer"},
		repos:    repos,
	}.run(t, act, labels(t, root))

	const out = "experimentalmachines/Qwen3-0.6B-ExecuTorch"
	assert.Contains(t, log, `RESULT window=2048 skipped=false files=["xnnpack/Qwen3-0.6B-8da4w-2k.pte"] repo=`+out+" reason=")
	assert.Regexp(t, `RESULT window=32768 skipped=true files=\[\] repo= reason=.*needs about [0-9.]+ GiB of memory`, log)
	files := srv.Files(out, "main")
	assert.Contains(t, files, "xnnpack/Qwen3-0.6B-8da4w-2k.pte")
	assert.Contains(t, files, "xnnpack/config.json")
	card, err := srv.FileBytes(out, "main", "README.md")
	require.NoError(t, err)
	assert.Contains(t, string(card), `| passed ("Paris") with the chat template |`, "the root action's smoke ran the source's chat template")
	assert.Contains(t, string(card), "## Speed", "the root action's smoke timed the file")
	assert.NotContains(t, log, "hf_e2etoken", "the token reached the log")
}
