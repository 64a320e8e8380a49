package watch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/catalog"
	"github.com/experimentalmachines/exe-expo/internal/watch"
)

// TestRebuildOfAnMtkFolderQueuesMediaTek: a MediaTek folder's config.json says "mtk" (the
// name ExecuServe reads), and its rebuild is queued under exe-expo's backend, mediatek,
// through Watcher.BackendName.
func TestRebuildOfAnMtkFolderQueuesMediaTek(t *testing.T) {
	r := newRig(t)
	state := r.pass(nil, watch.Options{}).State
	cat := catalog.New("experimentalmachines")
	cat.Models["experimentalmachines/Qwen3-0.6B-ExecuTorch"] = &catalog.Model{Source: "Qwen/Qwen3-0.6B", Folders: map[string]*catalog.Folder{
		"mtk/mt6991": {Backend: "mtk", Runtime: catalog.Runtime{ExecuTorch: "1.4.0"}, Windows: []catalog.Window{{Context: 2048, SourceRevision: "abc"}}},
	}}
	r.w.Catalog = func(context.Context) (*catalog.Catalog, error) { return cat, nil }
	r.w.Runtime = func(string) catalog.Runtime { return catalog.Runtime{ExecuTorch: "1.5.1"} }
	r.w.BackendName = func(n string) string { // as the CLI's exeExpoName answers
		if n == "mtk" {
			return "mediatek"
		}
		return n
	}
	sum := r.pass(state, watch.Options{DryRun: true})
	assert.Equal(t, []string{"Qwen/Qwen3-0.6B mtk/mt6991: built for ExecuTorch 1.4.0, now ExecuTorch 1.5.1"}, sum.Rebuilds)
	e := state.Models["Qwen/Qwen3-0.6B"]
	require.NotNil(t, e)
	require.Contains(t, e.Backends, "mediatek")
	require.NotContains(t, e.Backends, "mtk", "queued under exe-expo's name, which its workflow dispatches")
	assert.Contains(t, e.Backends["mediatek"].Reason, "rebuild: mtk/mt6991 was built for ExecuTorch 1.4.0")
}
