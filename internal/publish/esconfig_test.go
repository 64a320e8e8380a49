package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/appview"
)

// TestConfigReadsAsExecuServeReadsIt lays out every backend's folder as publish writes it
// and decodes each config.json with ExecuServe's field types (appview.ParseESConfig, which
// fails where ExecuServe's decoder fails and drops the folder): a chip folder's
// backend/target is the folder itself, which is how ExecuServe finds a chip's files, a CPU or
// GPU folder has a null target, and every file has its digest where ExecuServe reads it.
func TestConfigReadsAsExecuServeReadsIt(t *testing.T) {
	dir := t.TempDir()
	for _, w := range []win{
		{backend: "xnnpack", window: 2048, seed: 1}, {backend: "vulkan", window: 2048, seed: 2},
		{backend: "qnn", chip: "SM8750", window: 2048, seed: 3}, {backend: "mediatek", chip: "MT6991", window: 2048, seed: 4},
	} {
		writeWindow(t, dir, w)
	}
	repo, intents, err := Layout(context.Background(), dir, "")
	require.NoError(t, err)
	require.Len(t, repo.Configs, 4)
	// Both consumers' verdicts on the folder laid out as publish writes it: ExecuServe offers
	// every window (the MediaTek one beside its XNNPACK twin), the app breaks no rule.
	es := appview.BuildExecuServe(repo, intents)
	require.Empty(t, es.Problems)
	require.Len(t, es.Folders, 4)
	for _, f := range es.Folders {
		require.Empty(t, f.Dropped, f.Folder)
		require.Len(t, f.Variants, 1, f.Folder)
		require.True(t, f.Variants[0].Offered, "%s: %s", f.Folder, f.Variants[0].Dropped)
	}
	app := appview.Build(repo, nil, intents)
	require.Empty(t, app.Problems)
	for folder, b := range repo.Configs {
		c, err := appview.ParseESConfig(b)
		require.NoError(t, err, folder)
		require.NotNil(t, c.Backend, folder)
		chip := strings.Contains(folder, "/")
		if chip {
			require.NotNil(t, c.Target, folder)
			assert.Equal(t, folder, *c.Backend+"/"+*c.Target, "ExecuServe offers a chip folder only when backend/target is the folder")
		} else {
			assert.Nil(t, c.Target, "%s: ExecuServe takes a target as a chip-locked export", folder)
			assert.Equal(t, folder, *c.Backend)
		}
		require.NotEmpty(t, c.Variants, folder)
		for _, v := range c.Variants {
			names := v.Files
			if v.File != nil {
				names = []string{*v.File}
			}
			require.NotEmpty(t, names, folder)
			for _, n := range names {
				assert.Len(t, v.Digest(n), 64, "%s/%s: ExecuServe checks the download against it", folder, n)
			}
			if len(v.Files) > 0 {
				assert.NotNil(t, v.Embedding, "a window cut into chunks is offered only with its embedding table")
				assert.NotNil(t, v.Runner, "and its runner block")
			}
		}
	}
}

// TestParseESConfigFailsWhereExecuServeDoes holds the mirror to ExecuServe's decoder: a
// known field of the wrong type or a null where its field cannot be null fails the file;
// an unknown field does not (its decoder ignores unknown keys).
func TestParseESConfigFailsWhereExecuServeDoes(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		ok         bool
	}{
		{"ours, with fields ExecuServe does not know", `{"runtime":"executorch","backend":"xnnpack","target":null,"phones":[1],"variants":[{"file":"a.pte","size_bytes":1,"sha256":"ab","context":2048,"methods":{}}]}`, true},
		{"a context that is a string", `{"variants":[{"file":"a.pte","context":"2048"}]}`, false},
		{"a context past a 32-bit Int", `{"variants":[{"file":"a.pte","context":4294967296}]}`, false},
		{"a target that is a number", `{"target":8750,"variants":[]}`, false},
		{"a null size", `{"variants":[{"file":"a.pte","size_bytes":null}]}`, false},
		{"null chunk files", `{"variants":[{"file":"a.pte","files":null}]}`, false},
		{"null variants", `{"variants":null}`, false},
		{"a runner that is a list", `{"variants":[{"files":["a.pte"],"runner":[1]}]}`, false},
		{"fits_phone_budget as a string", `{"variants":[{"file":"a.pte","fits_phone_budget":"yes"}]}`, false},
		{"not an object", `[1]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := appview.ParseESConfig([]byte(tc.json))
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}
