package calib

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/drivers"
)

// TestPlanCommitted: the committed calibration plans 104 rows in the reference's order
// (48 search rows with the trailer naming their subject, 24 known questions, both app
// rows with 48-token replies; 32 general prompts with 128), and no row is a gate row.
func TestPlanCommitted(t *testing.T) {
	c, err := config.Default()
	require.NoError(t, err)
	rows := Plan(c.Calibration, c.Gate.Trailer)
	require.Len(t, rows, 104)
	first := rows[0]
	assert.Equal(t, drivers.CalibRow{Name: "Which US state is Montpelier the capital of?", App: true, MaxNewTokens: 48,
		User: "Which US state is Montpelier the capital of? (This question names Montpelier. Look it up with web_search before answering rather than recalling it, and answer from what the search returns.)"}, first)
	gate := map[string]bool{}
	for _, r := range c.Gate.Search {
		gate[r.Question] = true
	}
	for _, q := range c.Gate.Quiet {
		gate[q] = true
	}
	names := map[string]bool{}
	for i, r := range rows {
		assert.Equal(t, i < 72, r.App, "row %d %q", i, r.Name)
		assert.Equal(t, map[bool]int{true: 48, false: 128}[r.App], r.MaxNewTokens, r.Name)
		assert.Equal(t, i < 48, strings.Contains(r.User, "Look it up with web_search"), "only search rows carry the trailer: %q", r.User)
		assert.False(t, gate[r.Name], "%q is a gate row", r.Name)
		assert.False(t, names[r.Name], "%q planned twice", r.Name)
		names[r.Name] = true
	}
}

// rows is a plan of two app rows and one general row, and replies whose prompts share a
// 4-token head.
func rows() ([]drivers.CalibRow, []drivers.CalibReply) {
	plan := []drivers.CalibRow{{Name: "a", App: true}, {Name: "b", App: true}, {Name: "g"}}
	got := []drivers.CalibReply{
		{Name: "a", Prompt: []int{1, 2, 3, 4, 10, 11}, Reply: []int{20, 21}, Text: "yes"},
		{Name: "b", Prompt: []int{1, 2, 3, 4, 12, 13, 14}, Reply: []int{22}, Text: "no"},
		{Name: "g", Prompt: []int{1, 2, 5}, Reply: []int{23, 24, 25}, Text: "maybe"},
	}
	return plan, got
}

func TestAssemble(t *testing.T) {
	plan, got := rows()
	s, err := Assemble(plan, got, 3)
	require.NoError(t, err)
	want := Set{
		Rows: []drivers.SolveRow{
			{Tokens: []int{1, 2, 3, 4, 10, 11, 20, 21}, KeepFrom: 0},
			{Tokens: []int{1, 2, 3, 4, 12, 13, 14, 22}, KeepFrom: 4},
			{Tokens: []int{1, 2, 5, 23, 24, 25}, KeepFrom: 0},
		},
		AppRows: 2, Head: 4, Positions: 8 + 4 + 6,
	}
	assert.Empty(t, cmp.Diff(want, s))
}

func TestAssembleRefuses(t *testing.T) {
	long := make([]int, MaxSeqLength)
	for _, tc := range []struct {
		name  string
		edit  func(plan []drivers.CalibRow, got []drivers.CalibReply) ([]drivers.CalibRow, []drivers.CalibReply)
		limit int
		want  string
	}{
		{"app prompt over the limit past the head", nil, 2,
			`calibration row "b" has 3 prompt tokens past the 4-token app head, over calibration.prompt_limit 2`},
		{"general prompt over the limit", func(p []drivers.CalibRow, g []drivers.CalibReply) ([]drivers.CalibRow, []drivers.CalibReply) {
			g[2].Prompt = []int{1, 2, 5, 6}
			return p, g
		}, 3, `calibration row "g" has 4 prompt tokens, over calibration.prompt_limit 3`},
		{"row over the sequence", func(p []drivers.CalibRow, g []drivers.CalibReply) ([]drivers.CalibRow, []drivers.CalibReply) {
			g[2].Reply = long
			return p, g
		}, 3, `calibration row "g" is 2051 tokens with its reply, over the solve's 2048-token sequence`},
		{"more than half empty", func(p []drivers.CalibRow, g []drivers.CalibReply) ([]drivers.CalibRow, []drivers.CalibReply) {
			g[0].Text, g[2].Text = " ", ""
			return p, g
		}, 3, `the fp32 model's reply is empty on 2 of 3 calibration rows ("a", "g"): more than half, so the solve would calibrate on the prompts alone`},
		{"a row missing", func(p []drivers.CalibRow, g []drivers.CalibReply) ([]drivers.CalibRow, []drivers.CalibReply) {
			return p, g[:2]
		}, 3, "the calibration has 3 rows and the driver answered 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, got := rows()
			if tc.edit != nil {
				plan, got = tc.edit(plan, got)
			}
			_, err := Assemble(plan, got, tc.limit)
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestHalfEmptyPasses: exactly half the replies empty is not more than half.
func TestHalfEmptyPasses(t *testing.T) {
	plan, got := rows()
	plan, got = append(plan, drivers.CalibRow{Name: "h"}), append(got, drivers.CalibReply{Name: "h", Prompt: []int{7}, Reply: []int{0}})
	got[0].Text = ""
	s, err := Assemble(plan, got, 3)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "h"}, s.Empty)
}

func TestSharedHead(t *testing.T) {
	app := []drivers.CalibRow{{App: true}, {App: true}, {}}
	for _, tc := range []struct {
		name    string
		plan    []drivers.CalibRow
		prompts [][]int
		want    int
	}{
		{"common prefix of the app rows only", app, [][]int{{1, 2, 3, 9}, {1, 2, 4}, {5}}, 2},
		{"one app row shares nothing", []drivers.CalibRow{{App: true}, {}}, [][]int{{1, 2}, {1, 2}}, 0},
		{"never a whole prompt", app, [][]int{{1, 2}, {1, 2, 3}, {1}}, 1},
		{"nothing shared", app, [][]int{{1}, {2}, {1}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []drivers.CalibReply
			for _, p := range tc.prompts {
				got = append(got, drivers.CalibReply{Prompt: p})
			}
			assert.Equal(t, tc.want, sharedHead(tc.plan, got))
		})
	}
}

func TestExamples(t *testing.T) {
	assert.Equal(t, `"a"`, examples([]string{"a"}))
	assert.Equal(t, `"a", "b", "c" and 2 more`, examples([]string{"a", "b", "c", "d", "e"}))
}
