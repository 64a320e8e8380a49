package model_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
)

// decodesDuring is how many times f decoded a config.json. The counter is the process's,
// so the tests that read it do not run in parallel.
func decodesDuring(t *testing.T, f func()) int64 {
	t.Helper()
	before := model.Decodes()
	f()
	return model.Decodes() - before
}

// TestLoadDecodesOnce: opening a model decodes its config.json once, and reading the
// features, the architecture and the family any number of times decodes nothing more.
func TestLoadDecodesOnce(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "snapshot", "data", "Qwen__Qwen3-0.6B", "config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644))
	src := &model.Source{ID: "Qwen/Qwen3-0.6B"}
	n := decodesDuring(t, func() {
		require.NoError(t, model.Load(context.Background(), src, model.Dir(dir)))
		for range 3 {
			_, err := src.Config.Arch()
			require.NoError(t, err)
			_, err = src.Config.Features()
			require.NoError(t, err)
			assert.Equal(t, "qwen3", src.Config.Family())
			assert.Equal(t, []string{"Qwen3ForCausalLM"}, src.Config.Architectures())
		}
	})
	assert.Equal(t, int64(1), n, "decodes of one opened model")

	// A source whose Config was parsed before Load (source.Hub's, from the model info)
	// keeps it: config.json is neither read nor decoded again.
	pre, err := model.ParseConfig("Qwen/Qwen3-0.6B/config.json", b)
	require.NoError(t, err)
	held := &model.Source{ID: "Qwen/Qwen3-0.6B", Config: pre}
	n = decodesDuring(t, func() {
		require.NoError(t, model.Load(context.Background(), held, model.Dir(t.TempDir())))
	})
	assert.Equal(t, int64(0), n, "Load decodes a held config again")
	assert.Same(t, pre, held.Config)
	require.NotNil(t, held.Params, "the count is still computed from the architecture")
	assert.True(t, held.Params.Computed)
}

// TestEditIsTheOneRedecode: Edit decodes once per edit; a refused file is decoded once,
// and ParseConfig returns what decode refused.
func TestEditIsTheOneRedecode(t *testing.T) {
	var c *model.Config
	n := decodesDuring(t, func() {
		var err error
		c, err = model.ParseConfig("c", []byte(`{`+small+`}`))
		require.NoError(t, err)
	})
	assert.Equal(t, int64(1), n)
	n = decodesDuring(t, func() {
		c.Edit(func(text map[string]any) { text["hidden_act"] = "gelu" })
	})
	assert.Equal(t, int64(1), n)
	f, err := c.Features()
	require.NoError(t, err)
	assert.Equal(t, "gelu", f.HiddenAct)

	n = decodesDuring(t, func() {
		_, err := model.ParseConfig("c", []byte(`{`+small+`,"rope_theta":-1}`))
		require.ErrorContains(t, err, "c: rope_theta is -1, not a number in (0, 1e12]")
	})
	assert.Equal(t, int64(1), n)
	n = decodesDuring(t, func() {
		_, err := model.ParseConfig("c", []byte(`[]`))
		require.Error(t, err)
	})
	assert.Equal(t, int64(0), n, "a file that is no JSON object has nothing to decode")
}

// TestFamilyIsDecodedWithTheConfig: the family is read from architectures with the rest of
// the config, in internal/family's match order, and model's table of model classes and
// internal/family's families name the same families.
func TestFamilyIsDecodedWithTheConfig(t *testing.T) {
	for _, key := range model.FamilyKeys() {
		assert.NotNil(t, family.ByKey(key), "model names family %q, which internal/family does not hold", key)
	}
	for _, f := range family.Families {
		archs := model.FamilyArchitectures(f.Key)
		require.NotEmpty(t, archs, "family %s has no model class", f.Key)
		assert.Equal(t, f.Key, model.FamilyOf(archs))
	}
	c, err := model.ParseConfig("c", []byte(`{"architectures":["Nope","LlamaForCausalLM","Qwen3ForCausalLM"]}`))
	require.NoError(t, err)
	assert.Equal(t, "qwen3", c.Family(), "the first family in match order, not the first name")
	c, err = model.ParseConfig("c", []byte(`{"architectures":["Qwen3MoeForCausalLM"]}`))
	require.NoError(t, err)
	assert.Equal(t, "", c.Family())
	c, err = model.ParseConfig("c", []byte(`{"architectures":"LlamaForCausalLM"}`))
	require.NoError(t, err)
	assert.Equal(t, "", c.Family(), "architectures must be a list")
}
