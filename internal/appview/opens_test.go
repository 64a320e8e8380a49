package appview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheAppRefusesWhatItCannotOpen holds the app's pre-load probe (rule 11): a file
// without get_max_seq_len, one calling a delegate the stock 1.5.1 runtime does not register,
// or one that is no program at all is listed and then refused, offered on no phone, and
// publish refuses it as ours; a CPU program with both runners' metadata opens.
func TestTheAppRefusesWhatItCannotOpen(t *testing.T) {
	const file = "xnnpack/Qwen3-1.7B-8da4w-2k.pte"
	for _, tc := range []struct {
		name string
		prog *Program // nil: what config.json says (get_max_seq_len listed)
		want string   // "" : opens
	}{
		{name: "config.json lists get_max_seq_len"},
		{name: "XNNPACK with its metadata", prog: &Program{Methods: []string{"forward", "get_max_seq_len"}, Delegates: []string{"XnnpackBackend"}}},
		{name: "no get_max_seq_len", prog: &Program{Methods: []string{"forward", "get_max_context_len"}, Delegates: []string{"XnnpackBackend"}},
			want: "it has no get_max_seq_len method"},
		{name: "a QNN delegate in the CPU folder", prog: &Program{Methods: []string{"forward", "get_max_seq_len"}, Delegates: []string{"QnnBackend", "XnnpackBackend"}},
			want: "it calls QnnBackend, which the app's ExecuTorch 1.5.1 runtime does not register"},
		{name: "not a program", prog: &Program{Unreadable: "the file is not an ExecuTorch program"}, want: "not an ExecuTorch program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Repo{ID: "experimentalmachines/Qwen3-1.7B-ExecuTorch",
				Files:   []File{{"tokenizer.json", 1}, {file, 1e9}, {"xnnpack/config.json", 1}},
				Configs: map[string][]byte{"xnnpack": xnnpackConfig("xnnpack", "Qwen3-1.7B-8da4w-2k.pte", 2048)}}
			if tc.prog != nil {
				r.Programs = map[string]Program{file: *tc.prog}
			}
			v := Build(r, defaultPhones(t), Intents(r.Configs, appName))
			e := v.Files[0]
			require.True(t, e.Listed, "the app lists it: the probe runs once it is downloaded")
			if tc.want == "" {
				require.Empty(t, e.Refused)
				require.Empty(t, v.Problems)
				return
			}
			require.Contains(t, e.Refused, tc.want)
			for _, pf := range e.Phones {
				require.False(t, pf.Offered, "%d GB", pf.RAMGiB)
			}
			require.Len(t, v.Problems, 1)
			require.Equal(t, RuleOpens, v.Problems[0].Rule)
			var text strings.Builder
			require.NoError(t, v.WriteText(&text))
			require.Contains(t, text.String(), "yes, then [opens] "+e.Refused)
			require.Equal(t, file, v.Problems[0].File)
		})
	}
	// The config.json of a window cut into chunks lists no constant method for them: a chunk
	// has no get_max_seq_len, which is why the app stopped offering them.
	require.Contains(t, Program{Methods: []string{}}.Refusal(), "get_max_seq_len")
	require.Empty(t, Program{}.Refusal(), "unknown facts refuse nothing")
}
