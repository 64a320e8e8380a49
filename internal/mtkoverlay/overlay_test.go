package mtkoverlay_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/pinned"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
)

// stock is ExecuTorch v1.4.0's examples/mediatek as far as the overlay and the recipes read
// it: the files it patches, the ones its model definition imports, the stock scripts, byte
// for byte. It is the one kept copy of v1.4.0, shared with internal/recipe's real-source test
// (its NOTE.md lists each file's blob; testdata/SOURCES.md says what this package uses).
var stock = filepath.Join("..", "recipe", "testdata", "executorch-v1.5.1", "examples", "mediatek")

// userTree copies the stock files into a temporary ExecuTorch tree, with the clutter a
// real one may hold (example weights, earlier outputs, caches), and returns its
// examples/mediatek.
func userTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "executorch", "examples", "mediatek")
	require.NoError(t, filepath.WalkDir(stock, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(stock, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	}))
	for _, p := range []string{"models/llm_models/weights/Qwen3-4B/model.safetensors", "pte/old/old_0.pte", "models/llm_models/__pycache__/x.pyc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("clutter"), 0o644))
	}
	return dir
}

// hashes maps every file under dir to its sha256.
func hashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

func TestApplyLFM2(t *testing.T) {
	from := userTree(t)
	before := hashes(t, from)
	to := filepath.Join(t.TempDir(), "work", "executorch", "examples", "mediatek")
	require.NoError(t, mtkoverlay.Apply(from, to, "lfm2"))
	assert.Equal(t, before, hashes(t, from), "the user's tree is only read")

	got := hashes(t, to)
	for _, p := range mtkoverlay.Files("lfm2") {
		assert.Contains(t, got, p, "the overlay writes %s", p)
	}
	for _, p := range []string{"models/llm_models/weights/Qwen3-4B/model.safetensors", "pte/old/old_0.pte", "models/llm_models/__pycache__/x.pyc"} {
		assert.NotContains(t, got, p, "clutter stays behind")
	}
	assert.Equal(t, before["models/llm_models/modeling_common.py"], got["models/llm_models/modeling_common.py"], "stock files are copied as they are")

	sanity := read(t, filepath.Join(to, "aot_utils/llm_utils/sanity_checks.py"))
	assert.Contains(t, sanity, "        \"whisper\",\n        \"lfm2\",  # exe-expo overlay\n    ]\n")
	utils := read(t, filepath.Join(to, "aot_utils/llm_utils/utils.py"))
	assert.Equal(t, 2, strings.Count(utils, "from models.llm_models.configuration_lfm2 import Lfm2Config as config_class"), "both lookups by model_type")
	assert.Equal(t, 1, strings.Count(utils, "from models.llm_models.modeling_lfm2 import Lfm2ModelChunk as chunk_class"))
	assert.Equal(t, lines(read(t, filepath.Join(stock, "aot_utils/llm_utils/utils.py")))+5, lines(utils), "five lines added, none lost")
}

func TestApplyStockFamilyCopiesOnly(t *testing.T) {
	from := userTree(t)
	to := filepath.Join(t.TempDir(), "mediatek")
	require.NoError(t, os.MkdirAll(filepath.Join(to, "pte", "stale"), 0o755))
	require.NoError(t, mtkoverlay.Apply(from, to, "qwen3"))
	got := hashes(t, to)
	assert.NotContains(t, got, "model_export_scripts/lfm2.py")
	assert.Equal(t, hashes(t, stock)["aot_utils/llm_utils/utils.py"], got["aot_utils/llm_utils/utils.py"], "no patch for a family with a stock script")
	assert.NoDirExists(t, filepath.Join(to, "pte", "stale"), "an earlier copy is replaced")
	assert.Empty(t, mtkoverlay.Files("qwen3"))
}

// TestApplyRefuses: a tree the patches were not written against is refused before
// anything is written, naming the file.
func TestApplyRefuses(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, from string) (to string)
		want  []string
	}{
		{"a changed helper", func(t *testing.T, from string) string {
			p := filepath.Join(from, "aot_utils/llm_utils/utils.py")
			require.NoError(t, os.WriteFile(p, []byte(read(t, p)+"\n# local change\n"), 0o644))
			return filepath.Join(t.TempDir(), "copy")
		}, []string{"aot_utils/llm_utils/utils.py is not the file of ExecuTorch " + pinned.Version() + "'s examples/mediatek (sha256 ", "expected 435443611060)", "give the source tree of ExecuTorch " + pinned.Version()}},
		{"a missing helper", func(t *testing.T, from string) string {
			require.NoError(t, os.Remove(filepath.Join(from, "aot_utils/llm_utils/sanity_checks.py")))
			return filepath.Join(t.TempDir(), "copy")
		}, []string{"cannot read ", "sanity_checks.py: no such file or directory"}},
		{"a copy inside the tree", func(t *testing.T, from string) string {
			return filepath.Join(from, "models", "copy")
		}, []string{"overlap: the work folder must lie outside the ExecuTorch tree"}},
		{"a copy holding the tree", func(t *testing.T, from string) string {
			return filepath.Dir(from)
		}, []string{"overlap"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from := userTree(t)
			to := tc.spoil(t, from)
			before := hashes(t, from)
			err := mtkoverlay.Apply(from, to, "lfm2")
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before, hashes(t, from), "the user's tree is untouched")
			if !strings.HasPrefix(to, from) && to != filepath.Dir(from) {
				assert.NoDirExists(t, to, "nothing is written")
			}
		})
	}
}

func TestCheck(t *testing.T) {
	from := userTree(t)
	assert.NoError(t, mtkoverlay.Check(from, "lfm2"))
	p := filepath.Join(from, "aot_utils/llm_utils/sanity_checks.py")
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(read(t, p), `"gemma3",`, `"gemma3", "lfm2",`, 1)), 0o644))
	err := mtkoverlay.Check(from, "lfm2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), p+" is not the file of ExecuTorch "+pinned.Version()+"'s examples/mediatek")
	assert.NoError(t, mtkoverlay.Check(from, "qwen3"), "a stock family needs no stock file of a version")
}

// TestSupport is the rule plan and export share: a stock script, or one the overlay adds
// for the family, whose model definition builds the model.
func TestSupport(t *testing.T) {
	tests := []struct {
		family, script string
		ft             model.Features
		want           string
	}{
		{"qwen3", "qwen.py", model.Features{}, ""},
		{"llama", "llama.py", model.Features{}, ""},
		{"lfm2", "lfm2.py", model.Features{ConvLCache: 3}, ""},
		{"lfm2", "lfm2.py", model.Features{}, ""},
		{"lfm2", "lfm2.py", model.Features{ConvLCache: 4}, "conv_L_cache is 4, and the MediaTek lfm2 model builds its short convolution with a kernel of 3"},
		{"lfm2", "lfm2_v2.py", model.Features{}, "ExecuTorch " + pinned.Version() + "'s examples/mediatek has no lfm2_v2.py, and exe-expo's overlay adds none for lfm2"},
		{"smollm3", "smollm3.py", model.Features{}, "ExecuTorch " + pinned.Version() + "'s examples/mediatek has no smollm3.py, and exe-expo's overlay adds none for smollm3"},
	}
	for _, tc := range tests {
		t.Run(tc.family+"/"+tc.script, func(t *testing.T) {
			assert.Equal(t, tc.want, mtkoverlay.Support(tc.family, tc.script, tc.ft))
		})
	}
}

// TestStockScripts holds the overlay's list of stock scripts to v1.4.0's folder listing,
// and its own scripts to files v1.4.0 lacks, which is why the overlay exists.
func TestStockScripts(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "model_export_scripts.txt"))
	require.NoError(t, err)
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		listed[sc.Text()] = true
	}
	require.NoError(t, sc.Err())
	require.Len(t, listed, 21)
	for _, s := range []string{"gemma.py", "llama.py", "phi.py", "qwen.py", "whisper.py"} {
		assert.True(t, listed[s] && mtkoverlay.Stock(s), s)
	}
	assert.Equal(t, []string{"lfm2"}, mtkoverlay.Families())
	for _, key := range mtkoverlay.Families() {
		fam, ok := mtkoverlay.For(key)
		require.True(t, ok)
		assert.False(t, listed[fam.Script], "v1.4.0 has no %s", fam.Script)
		assert.False(t, mtkoverlay.Stock(fam.Script))
		assert.Contains(t, mtkoverlay.Files(key), "model_export_scripts/"+fam.Script)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func lines(s string) int { return strings.Count(s, "\n") }
