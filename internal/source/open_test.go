package source_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/source"
)

// TestOpenErrors: a folder without config.json, a ref that is neither folder nor id, and
// an id the snapshot lacks are refused, each in its own sentence.
func TestOpenErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name, ref, want string
	}{
		{"folder without config.json", empty, empty + " is a folder without config.json; give a model folder or a Hub id (org/name)"},
		{"neither folder nor id", "not a model", `"not a model" is neither a local model folder nor a Hugging Face model id (org/name)`},
		{"id the snapshot lacks", "Qwen/Qwen9-7B", "no Hub client; and Qwen/Qwen9-7B is not in the embedded snapshot "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := source.Open(context.Background(), tc.ref, "main", nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestOpenLocalFolder: a folder with config.json and no weights opens as a local source
// whose parameter count is computed from the architecture.
func TestOpenLocalFolder(t *testing.T) {
	dir := qwenFolder(t, "weights")
	src, offline, err := source.Open(context.Background(), dir, "main", nil)
	require.NoError(t, err)
	assert.False(t, offline)
	assert.True(t, strings.HasPrefix(src.Origin, "local folder "), src.Origin)
	require.NotNil(t, src.Params)
	assert.True(t, src.Params.Computed, "a folder without weights: %+v", src.Params)
}

// qwenFolder writes a local model folder called name holding Qwen3-0.6B's config.json.
func qwenFolder(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	cfgJSON, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfgJSON, 0o644))
	return dir
}

// fakeHub answers like a Hub client would: one model, or unreachable.
type fakeHub struct{ err error }

func (h fakeHub) Source(_ context.Context, id, rev string) (*model.Source, model.Files, error) {
	if h.err != nil {
		return nil, nil, h.err
	}
	dir := filepath.Join("..", "snapshot", "data", strings.Replace(id, "/", "__", 1))
	return &model.Source{ID: id, Revision: rev, SHA: "abc123", PipelineTag: "text-generation", Origin: "Hugging Face Hub"}, model.Dir(dir), nil
}

// TestOpenHub: a Hub answer is read from the Hub; an unreachable Hub falls back to the
// snapshot and says why; any other Hub error is the answer.
func TestOpenHub(t *testing.T) {
	ctx := context.Background()
	src, offline, err := source.Open(ctx, "Qwen/Qwen3-0.6B", "main", fakeHub{})
	require.NoError(t, err)
	assert.False(t, offline)
	assert.Equal(t, "abc123", src.SHA)
	assert.NotNil(t, src.Config)

	src, offline, err = source.Open(ctx, "Qwen/Qwen3-0.6B", "main", fakeHub{err: source.ErrUnreachable})
	require.NoError(t, err)
	assert.True(t, offline)
	assert.Contains(t, src.Origin, "embedded snapshot")
	assert.Contains(t, src.Origin, "could not be reached")

	_, _, err = source.Open(ctx, "Qwen/Qwen3-0.6B", "main", fakeHub{err: os.ErrPermission})
	assert.ErrorIs(t, err, os.ErrPermission, "a Hub that answered is not replaced by the snapshot")
}

// An offline plan cannot know what a revision holds: it says the revision was not checked,
// in the text's first line and in the JSON; a Hub answer carries no such note.
func TestRevisionNotCheckedOffline(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Default()
	require.NoError(t, err)
	tests := []struct {
		name, revision string
		hub            source.HubReader
		first, note    string
	}{
		{"snapshot, a tag", "v2.0", nil, "Qwen/Qwen3-0.6B at v2.0 (not checked: the embedded snapshot is not tied to any revision)", "not checked"},
		{"snapshot, unreachable Hub", "main", fakeHub{err: source.ErrUnreachable}, "Qwen/Qwen3-0.6B at main (not checked: the embedded snapshot is not tied to any revision)", "not checked"},
		{"Hub", "v2.0", fakeHub{}, "Qwen/Qwen3-0.6B at v2.0", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, _, err := source.Open(ctx, "Qwen/Qwen3-0.6B", tc.revision, tc.hub)
			require.NoError(t, err)
			p := plan.Build(cfg, src, "xnnpack")
			var text bytes.Buffer
			require.NoError(t, p.WriteText(&text))
			assert.Equal(t, tc.first, strings.SplitN(text.String(), "\n", 2)[0])
			if tc.note == "" {
				assert.Empty(t, p.RevisionNote)
			} else {
				assert.Contains(t, p.RevisionNote, tc.note)
			}
		})
	}
}

// TestOpenDirID: a folder is known by its own name unless an id names the Hub id it
// holds; an id that is no Hub id is an *IDError carrying it, in words that name no flag.
func TestOpenDirID(t *testing.T) {
	ctx := context.Background()
	dir := qwenFolder(t, "weights")

	src, err := source.OpenDir(ctx, dir, "")
	require.NoError(t, err)
	assert.Equal(t, "weights", src.ID)
	assert.True(t, src.IDFromFolder)

	src, err = source.OpenDir(ctx, dir, "Qwen/Qwen3-0.6B")
	require.NoError(t, err)
	assert.Equal(t, "Qwen/Qwen3-0.6B", src.ID)
	assert.False(t, src.IDFromFolder)

	_, err = source.OpenDir(ctx, dir, "not an id")
	var bad *source.IDError
	require.ErrorAs(t, err, &bad)
	assert.Equal(t, "not an id", bad.ID)
	assert.Equal(t, `the model id "not an id" is not a Hugging Face model id (org/name)`, err.Error())
}

// TestOpenDirCard: a local folder's model card (README.md front matter) is the source's
// card metadata, as the Hub's cardData is for a Hub repo: the export records its license
// from it. A folder without a card has none; a card whose front matter is not YAML is
// refused with its path.
func TestOpenDirCard(t *testing.T) {
	cases := []struct {
		name, card string // "" writes no README.md
		want       map[string]any
		err        string
	}{
		{"license id", "---\nlicense: apache-2.0\n---\n# Qwen3\n", map[string]any{"license": "apache-2.0"}, ""},
		{"other, by name and link", "---\nlicense: other\nlicense_name: lfm1.0\nlicense_link: LICENSE\n---\n",
			map[string]any{"license": "other", "license_name": "lfm1.0", "license_link": "LICENSE"}, ""},
		{"no card", "", nil, ""},
		{"card without front matter", "# Qwen3\n", nil, ""},
		{"front matter that is not YAML", "---\nlicense: [mit\n---\n", nil, "README.md: the YAML front matter is not a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := qwenFolder(t, "Qwen3-0.6B")
			if tc.card != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte(tc.card), 0o644))
			}
			src, err := source.OpenDir(context.Background(), dir, "Qwen/Qwen3-0.6B")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Contains(t, err.Error(), dir)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, src.Card)
		})
	}
}
