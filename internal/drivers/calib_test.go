package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/gate"
)

// standinModel writes a model folder the stand-in transformers load: a chat template and
// tinyWeights drawn from seed (vocabulary vocab, token 0 is EOS); eosBias is added to
// EOS's logit.
func standinModel(t *testing.T, seed int64, vocab int, eosBias float64) (string, tinyWeights) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	const dim = 6
	m := tinyWeights{B: make([]float64, vocab)}
	for i := 0; i < vocab; i++ {
		e, w := make([]float64, dim), make([]float64, dim)
		for j := range e {
			e[j], w[j] = rng.NormFloat64(), 4*rng.NormFloat64()
		}
		m.Emb, m.W = append(m.Emb, e), append(m.W, w)
		m.B[i] = rng.NormFloat64()
	}
	m.B[0] += eosBias
	dir := t.TempDir()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "standin_model.json"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "template.txt"), []byte("{content}"), 0o644))
	return dir, m
}

// standinTokens is the stand-in tokenizer's rendering of a row, worked out here on its own.
func standinTokens(p gate.Prompt, row CalibRow, vocab int) []int {
	var lines []string
	if row.App {
		lines = append(lines, "system: "+p.System)
		var names []string
		for _, tool := range p.Tools {
			names = append(names, tool["function"].(map[string]any)["name"].(string))
		}
		lines = append(lines, "tools: "+strings.Join(names, " "))
		for _, turn := range p.Primer {
			lines = append(lines, turn.Role+": "+turn.Content)
		}
	}
	lines = append(lines, "user: "+row.User, "assistant:")
	var ids []int
	for _, w := range strings.Fields(strings.Join(lines, "\n")) {
		sum := 0
		for _, c := range []byte(w) {
			sum += int(c)
		}
		ids = append(ids, 1+sum%(vocab-1))
	}
	return ids
}

// greedy continues ids with m's argmax, up to n tokens, stopping after EOS (0).
func greedy(m tinyWeights, ids []int, n int) []int {
	seq := append([]int{}, ids...)
	var out []int
	for len(out) < n {
		next := argmax(m.probs(seq))
		seq, out = append(seq, next), append(out, next)
		if next == 0 {
			break
		}
	}
	return out
}

func standinText(ids []int) string {
	var words []string
	for _, id := range ids {
		if id != 0 {
			words = append(words, fmt.Sprintf("w%d", id))
		}
	}
	return strings.Join(words, " ")
}

// standinRunner runs the drivers with Debian's torch and the stand-in transformers.
func standinRunner(t *testing.T) Runner {
	t.Helper()
	standin, err := filepath.Abs(filepath.Join("testdata", "smoke_standin"))
	require.NoError(t, err)
	return Runner{Python: torchPython(t), Dir: filepath.Join(t.TempDir(), "drivers"), Env: []string{"PYTHONPATH=" + standin}}
}

// TestCalibRowsContract runs calib_rows.py through the stand-in transformers: app rows are
// rendered with the system prompt, primer and tools, a general row alone; each is
// continued by the model's greedy reply, which stops at max_new_tokens or after EOS; the
// replies come back in the plan's order with their text. The expected tokens and replies
// are worked out here from the same weights.
func TestCalibRowsContract(t *testing.T) {
	r := standinRunner(t)
	prompt, _, err := gate.LoadPrompt("")
	require.NoError(t, err)
	rows := []CalibRow{
		{Name: "general", User: "Write a haiku about autumn rain.", MaxNewTokens: 9},
		{Name: "search", User: "Which country is Tartu in? (Look it up.)", App: true, MaxNewTokens: 5},
		{Name: "known", User: "How many legs does a spider have?", App: true, MaxNewTokens: 5},
	}
	for _, tc := range []struct {
		name    string
		eosBias float64
	}{{"replies to the limit", -100}, {"EOS at once", 100}} {
		t.Run(tc.name, func(t *testing.T) {
			const vocab = 17
			dir, m := standinModel(t, 7, vocab, tc.eosBias)
			got, _, err := r.CalibRows(context.Background(), CalibRows{Model: dir, Prompt: prompt, Rows: rows})
			require.NoError(t, err)
			require.Len(t, got, len(rows))
			for i, row := range rows {
				want := standinTokens(prompt, row, vocab)
				assert.Equal(t, row.Name, got[i].Name)
				assert.Equal(t, want, got[i].Prompt, row.Name)
				reply := greedy(m, want, row.MaxNewTokens)
				assert.Equal(t, reply, got[i].Reply, row.Name)
				assert.Equal(t, standinText(reply), got[i].Text, row.Name)
				if tc.eosBias > 0 {
					assert.Equal(t, []int{0}, got[i].Reply, "EOS ends the reply")
					assert.Empty(t, got[i].Text)
				} else {
					assert.Len(t, got[i].Reply, row.MaxNewTokens, "without EOS the reply runs to max_new_tokens")
				}
			}
			assert.Greater(t, len(got[1].Prompt), len(got[0].Prompt)+10, "the app rows carry the system prompt, primer and tools")
		})
	}
}

func TestCalibRowsRefusals(t *testing.T) {
	r := standinRunner(t)
	dir, _ := standinModel(t, 1, 13, 0)
	_, _, err := r.CalibRows(context.Background(), CalibRows{Model: dir, Rows: []CalibRow{{Name: "q", User: "hello", MaxNewTokens: 0}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "calib_rows.py exited with status 1: row 'q' asks for 0 new tokens")

	_, _, err = r.CalibRows(context.Background(), CalibRows{Model: dir})
	assert.EqualError(t, err, "calibration plan: the model folder and at least one row are required")
}
