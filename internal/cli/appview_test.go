package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/appview"
	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// TestAppviewCommand shows an export folder as the app will see it once published, then
// the published repo itself, and refuses a Hub repo that pushes a file past the 40.
func TestAppviewCommand(t *testing.T) {
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_OUTPUT", "")
	dir := exportedWindow(t, true)
	const file = "xnnpack/SmolLM2-360M-Instruct-8da4w-4k.pte"

	views := map[string]*appview.View{}
	for _, ref := range []string{dir, publishRepo} {
		if ref == publishRepo {
			code, _, errs := run(t, "publish", dir)
			require.Equal(t, ExitOK, code, errs)
		}
		code, out, errs := run(t, "appview", ref)
		require.Equal(t, ExitOK, code, errs)
		assert.Contains(t, out, publishRepo+" as the openweights app sees it")
		assert.Contains(t, out, "size hint: 360M; tokenizers: tokenizer.json")
		code, out, errs = run(t, "appview", ref, "--json")
		require.Equal(t, ExitOK, code, errs)
		var both struct {
			App        *appview.View   `json:"app"`
			ExecuServe *appview.ESView `json:"execuserve"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &both))
		require.NotNil(t, both.ExecuServe, "both consumers by default")
		require.Empty(t, both.ExecuServe.Problems)
		require.Len(t, both.ExecuServe.Folders, 1)
		require.Equal(t, "xnnpack", both.ExecuServe.Folders[0].Folder)
		require.True(t, both.ExecuServe.Folders[0].Variants[0].Offered, both.ExecuServe.Folders[0].Variants[0].Dropped)
		v := *both.App
		views[ref] = &v
		require.Len(t, v.Files, 1, ref)
		e := v.Files[0]
		assert.Equal(t, file, e.Path)
		assert.True(t, e.Listed, e.Dropped)
		assert.Equal(t, appview.XNNPACK, e.Backend)
		assert.Equal(t, "smollm2", e.Family)
		assert.Equal(t, 4096, e.Window, "the app reads the window from the folder's config.json")
		assert.Equal(t, "tokenizer.json", e.Tokenizer)
		assert.Empty(t, v.Problems)
	}
	assert.Equal(t, views[dir].Files, views[publishRepo].Files, "the folder before publish reads as the repo after")

	files := map[string][]byte{"tokenizer.json": []byte("{}")}
	for i := range 41 {
		files[fmt.Sprintf("xnnpack/Qwen3-1.7B-8da4w-%02d.pte", i)] = []byte(strings.Repeat("x", 100+i))
	}
	srv.MustAddModel(t, "someone/Qwen3-1.7B-ExecuTorch", files)
	code, out, errs := run(t, "appview", "someone/Qwen3-1.7B-ExecuTorch")
	require.Equal(t, ExitNotEligible, code, errs)
	assert.Contains(t, out, "no: it is the 41st smallest .pte of the repo and the app keeps the 40 smallest")
	assert.Contains(t, errs, "[first-40] xnnpack/Qwen3-1.7B-8da4w-40.pte")

	code, _, errs = run(t, "appview", "not a repo")
	require.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "REPO")
}

// TestAppviewConsumers: a Hub repo whose MediaTek folder says "backend": "mediatek" (as
// exe-expo wrote it before ExecuServe's rules were read) is nothing the app offers, so the
// app's verdict passes, while ExecuServe drops the folder: exit 3 for it and for both.
func TestAppviewConsumers(t *testing.T) {
	srv := hubtest.New(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_test")
	const repo = "experimentalmachines/Qwen3-1.7B-ExecuTorch"
	srv.MustAddModel(t, repo, map[string][]byte{
		"tokenizer.json":                  []byte("{}"),
		"mtk/mt6991/m-2k-chunk1of2.pte":   []byte("chunk one"),
		"mtk/mt6991/m-2k-chunk2of2.pte":   []byte("chunk two"),
		"mtk/mt6991/m-embedding-fp32.bin": []byte("embedding"),
		"mtk/mt6991/config.json": []byte(`{"runtime":"executorch","runtime_version":"1.5.1","backend":"mediatek","target":"mt6991","variants":[` +
			`{"files":["m-2k-chunk1of2.pte","m-2k-chunk2of2.pte"],"embedding":"m-embedding-fp32.bin","size_bytes":27,"sha256":{},"context":2048,"runner":{},"methods":{}}]}`),
	})
	code, out, errs := run(t, "appview", repo, "--consumer", "app")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "the app's Discover offers no NeuroPilot file")
	assert.NotContains(t, out, "ExecuServe")

	for _, args := range [][]string{{"--consumer", "execuserve"}, nil} {
		code, out, errs = run(t, append([]string{"appview", repo}, args...)...)
		require.Equal(t, ExitNotEligible, code, errs)
		assert.Contains(t, out, "mtk/mt6991/: not read [execuserve-target]: backend/target is mediatek/mt6991, and ExecuServe offers a chip folder only when that is the folder")
		assert.Contains(t, errs, "[execuserve-target] mtk/mt6991/m-2k-chunk1of2.pte")
		assert.Equal(t, args == nil, strings.Contains(out, "as the openweights app sees it"), "both consumers by default")
	}
	code, _, errs = run(t, "appview", repo, "--consumer", "llama.cpp")
	require.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "give app or execuserve")
}
