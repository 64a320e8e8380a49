package appview

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWindowDiffersFromExported holds the second half of the window rule: a variant whose
// methods state another window than the one exe-expo exported (config.json's context, or
// the export report) is a problem, for the app shows that other window; matching methods
// are none. Every case keeps get_max_seq_len, without which the app refuses the file
// before it reads a window (rule 11).
func TestWindowDiffersFromExported(t *testing.T) {
	const file = "xnnpack/Qwen3-1.7B-8da4w-2k.pte"
	for _, tc := range []struct {
		name, methods string
		want          string // "" for no window problem
	}{
		{"methods state a longer window", `{"get_max_context_len":4096,"get_max_seq_len":4096}`,
			"the app shows a 4096-token window and the file was exported at 2048"},
		{"methods state a shorter window by get_max_seq_len", `{"get_max_seq_len":1024}`,
			"the app shows a 1024-token window and the file was exported at 2048"},
		{"methods agree", `{"get_max_context_len":2048,"get_max_seq_len":2048}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Repo{ID: "experimentalmachines/Qwen3-1.7B-ExecuTorch",
				Files: []File{{"tokenizer.json", 1}, {file, 1e9}, {"xnnpack/config.json", 1}},
				Configs: map[string][]byte{"xnnpack": []byte(`{"backend":"xnnpack","variants":[{"file":"Qwen3-1.7B-8da4w-2k.pte","context":2048,"methods":` +
					tc.methods + `}]}`)}}
			v := Build(r, defaultPhones(t), Intents(r.Configs, nil))
			if tc.want == "" {
				require.Empty(t, v.Problems)
				return
			}
			require.Len(t, v.Problems, 1, "%v", v.Problems)
			p := v.Problems[0]
			require.Equal(t, RuleWindow, p.Rule)
			require.Equal(t, file, p.File)
			require.Contains(t, p.Why, tc.want)
			require.NotEmpty(t, p.Fix)
		})
	}
}
