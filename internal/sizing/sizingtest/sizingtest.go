// Package sizingtest gives the tests of the size models (internal/sizing's and each backend's in
// internal/backend/<name>) the models they are held to: the ones plan sizes, and the ones at
// internal/model's bounds, where no size may wrap or saturate. It is for tests only.
package sizingtest

import (
	"context"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/experimentalmachines/exe-expo/internal/source"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atBounds is a config.json with every architecture number at the largest value
// internal/model accepts, and an untied head so the embedding counts twice.
const atBounds = `{"num_hidden_layers":1024,"hidden_size":65536,"num_attention_heads":1024,
"num_key_value_heads":1024,"head_dim":1024,"vocab_size":4194304,"intermediate_size":1048576,
"max_position_embeddings":134217728,"tie_word_embeddings":false}`

// BoundWindows are the windows a bounds test sizes: a small one, 32k and the widest the
// config accepts (2^20).
var BoundWindows = []int{128, 32768, 1 << 20}

// AtBounds are the models with every architecture number at its bound: once with the
// parameters those numbers compute, once with the largest count a header may claim.
func AtBounds(t testing.TB) []sizing.Model {
	t.Helper()
	c, err := model.ParseConfig("bounds/config.json", []byte(atBounds))
	require.NoError(t, err)
	a, err := c.Arch()
	require.NoError(t, err)
	computed := a.ComputedParams()
	require.Positive(t, computed)
	assert.LessOrEqual(t, computed, int64(model.MaxParams), "a computed count must stay within what a header may claim")
	return []sizing.Model{{Arch: a, Params: computed, HFRope: true}, {Arch: a, Params: model.MaxParams, HFRope: true}}
}

// InRange holds a size at the bounds to be positive and below 2^62: nothing wrapped and
// nothing saturated.
func InRange(t testing.TB, v int64, what string, args ...any) {
	t.Helper()
	assert.Positive(t, v, append([]any{what}, args...)...)
	assert.Less(t, v, int64(1)<<62, append([]any{what}, args...)...)
}

// Sized is the size model plan uses for id, opened as an offline plan opens it: from the
// embedded snapshot, with the Hub's own parameter total.
func Sized(t testing.TB, id string) sizing.Model {
	t.Helper()
	src, offline, err := source.Open(context.Background(), id, "main", nil)
	if err != nil || !offline {
		t.Fatalf("open %s offline: %v (offline %v)", id, err, offline)
	}
	m, err := plan.SizingModel(src, family.Of(src.Config))
	require.NoError(t, err)
	return m
}
