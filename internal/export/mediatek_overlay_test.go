package export_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/export"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
)

// v140Tree copies the kept files of the pinned ExecuTorch (internal/recipe's testdata, which holds
// what internal/mtkoverlay patches or imports) into a temporary ExecuTorch source tree.
func v140Tree(t *testing.T) string {
	t.Helper()
	from := filepath.Join("..", "recipe", "testdata", "executorch-v1.5.1")
	et := filepath.Join(t.TempDir(), "executorch")
	require.NoError(t, filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(et, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return os.WriteFile(filepath.Join(et, rel), b, 0o644)
	}))
	require.NoError(t, os.MkdirAll(filepath.Join(et, "examples", "mediatek", "model_export_scripts"), 0o755))
	return et
}

// treeHashes maps every file under dir to its sha256.
func treeHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

// lfm2Options exports LFM2.5-1.2B (the Base config under the chat model's id) to MediaTek
// with the stand-in toolchain and the given ExecuTorch tree.
func lfm2Options(t *testing.T, et string) export.Options {
	o := options(t, "LiquidAI/LFM2.5-1.2B-Base", "mediatek", "ok", 0)
	o.ID, o.SoC, o.ExecuTorch, o.MTKPython = "LiquidAI/LFM2.5-1.2B-Instruct", "MT6991", et, filepath.Join(standin, "python-ok")
	o.KeepWork = true
	return o
}

// TestMediaTekLFM2Overlay: the LFM2 script runs in a copy of ExecuTorch's examples/mediatek
// under the work folder with the overlay applied, beside a weights folder linking the
// model's files; the user's ExecuTorch tree and model folder are only read.
func TestMediaTekLFM2Overlay(t *testing.T) {
	et := v140Tree(t)
	o := lfm2Options(t, et)
	beforeTree, beforeModel := treeHashes(t, et), treeHashes(t, o.Model)

	res, err := export.Run(context.Background(), o)
	require.NoError(t, err)
	r := res.Report
	require.Len(t, r.Files, 5, "four chunks and the embedding table")
	assert.Equal(t, "mtk/mt6991/LFM2.5-1.2B-Instruct-neuropilot-a16w8-512-chunk1of4.pte", r.Files[0].Path)
	assert.Equal(t, mtkoverlay.Files("lfm2"), r.Recipe["overlay"], "the report names the overlay's files")
	assert.Equal(t, beforeTree, treeHashes(t, et), "the ExecuTorch tree is untouched: no pte/, no patch")
	assert.Equal(t, beforeModel, treeHashes(t, o.Model), "the model folder is untouched")

	copyDir := filepath.Join(o.Work, "executorch", "examples", "mediatek")
	for _, p := range mtkoverlay.Files("lfm2") {
		assert.FileExists(t, filepath.Join(copyDir, filepath.FromSlash(p)))
	}
	weights := filepath.Join(o.Work, "weights", "LFM2.5-1.2B-Instruct")
	for _, name := range []string{"tokenizer.json", "model.safetensors", "LICENSE"} {
		target, err := os.Readlink(filepath.Join(weights, name))
		require.NoError(t, err, "%s is linked into the weights folder", name)
		assert.Equal(t, filepath.Join(o.Model, name), target)
	}
	fi, err := os.Lstat(filepath.Join(weights, "config.json"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "config.json is the recipe's, not a link to the model's")
}

// TestMediaTekLFM2RefusesOtherTree: an ExecuTorch tree whose patched helpers are not
// the pinned release's is refused before any work, naming the file and the option to fix.
func TestMediaTekLFM2RefusesOtherTree(t *testing.T) {
	et := v140Tree(t)
	utils := filepath.Join(et, "examples", "mediatek", "aot_utils", "llm_utils", "utils.py")
	b, err := os.ReadFile(utils)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(utils, append(b, "\n# a later release\n"...), 0o644))
	o := lfm2Options(t, et)

	_, err = export.Run(context.Background(), o)
	var in *export.InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, export.FieldExecuTorch, in.Field)
	assert.Contains(t, err.Error(), "ExecuTorch: "+utils+" is not the file of ExecuTorch "+pinned.Version()+"'s examples/mediatek (sha256 ")
	assert.NoDirExists(t, filepath.Join(o.Work, "executorch"), "nothing was laid out")
	assert.NoDirExists(t, filepath.Join(o.Work, "weights"), "no recipe file was written")
}
