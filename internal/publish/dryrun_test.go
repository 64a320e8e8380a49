package publish

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDryRunShowsTheCommitAndWritesNothing plans a re-export of a published window under
// another name: the plan adds the new file, deletes the old one, shows the card's diff,
// and the repo does not move.
func TestDryRunShowsTheCommitAndWritesNothing(t *testing.T) {
	srv, c := newHub(t)
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	_, err := publishDir(ctx, c, a, writeWindow(t, a, win{backend: "xnnpack", window: 4096, seed: 1}))
	require.NoError(t, err)
	head := srv.Head(testRepo)
	w, err := Load(b, writeWindow(t, b, win{backend: "xnnpack", window: 4096, seed: 2, gptq: true}), "")
	require.NoError(t, err)
	p, err := DryRun(ctx, c, w)
	require.NoError(t, err)
	assert.Equal(t, head, srv.Head(testRepo), "a dry run writes nothing")
	assert.Equal(t, head, p.Head)
	assert.Equal(t, []string{"xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"}, p.Delete)
	text := p.Text()
	assert.Contains(t, text, "  add    xnnpack/SmolLM2-360M-Instruct-8da4w-gptq-4k.pte (")
	assert.Contains(t, text, "  delete xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte\n")
	assert.Contains(t, text, "--- README.md (on the Hub)\n+++ README.md (rebuilt)\n")
	assert.Contains(t, text, "-| XNNPACK (CPU) | any arm64 | [`xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte`]")
	assert.Contains(t, text, "+| XNNPACK (CPU) | any arm64 | [`xnnpack/SmolLM2-360M-Instruct-8da4w-gptq-4k.pte`]")
}
