package appview

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// esRepo is a repo laid out as publish writes it, every backend: XNNPACK and MediaTek at
// 2k and 4k, Vulkan and QNN at 2k; edit changes a folder's config.json text before parsing.
func esRepo(edit map[string]func(string) string) (Repo, map[string]Intent) {
	single := func(backend, target, file string, ctx int) string {
		return fmt.Sprintf(`{"runtime":"executorch","runtime_version":"1.5.1","backend":%q,"target":%s,"tokenizer":"tokenizer.json","phones":[],`+
			`"variants":[{"file":%q,"size_bytes":10,"sha256":"%064d","context":%d,"fits_phone_budget":true,"methods":{"get_max_seq_len":%d}}]}`,
			backend, target, file, 1, ctx, ctx)
	}
	chunks := func(l string, ctx int) string {
		return fmt.Sprintf(`{"files":["m-%[1]s-chunk1of2.pte","m-%[1]s-chunk2of2.pte"],"embedding":"emb.bin","size_bytes":30,"sha256":{"m-%[1]s-chunk1of2.pte":"a"},"context":%[2]d,"runner":{"cache_size":%[2]d}}`, l, ctx)
	}
	cfgs := map[string]string{
		"xnnpack":    strings.Replace(single("xnnpack", "null", "m-2k.pte", 2048), `}]}`, `},{"file":"m-4k.pte","size_bytes":10,"sha256":"b","context":4096}]}`, 1),
		"vulkan":     single("vulkan", "null", "m-vulkan-2k.pte", 2048),
		"qnn/sm8750": single("qnn", `"sm8750"`, "m-qnn-2k.pte", 2048),
		"mtk/mt6991": `{"runtime":"executorch","runtime_version":"1.5.1","backend":"mtk","target":"mt6991","variants":[` + chunks("2k", 2048) + "," + chunks("4k", 4096) + `]}`,
	}
	r := Repo{ID: "experimentalmachines/Qwen3-1.7B-ExecuTorch", Configs: map[string][]byte{}}
	intents := map[string]Intent{}
	for _, p := range []string{"xnnpack/m-2k.pte", "xnnpack/m-4k.pte", "vulkan/m-vulkan-2k.pte", "qnn/sm8750/m-qnn-2k.pte",
		"mtk/mt6991/m-2k-chunk1of2.pte", "mtk/mt6991/m-2k-chunk2of2.pte", "mtk/mt6991/m-4k-chunk1of2.pte", "mtk/mt6991/m-4k-chunk2of2.pte"} {
		r.Files = append(r.Files, File{p, 10})
		intents[p] = Intent{}
	}
	r.Files = append(r.Files, File{"mtk/mt6991/emb.bin", 5}, File{"tokenizer.json", 1})
	for folder, c := range cfgs {
		if f := edit[folder]; f != nil {
			c = f(c)
		}
		r.Configs[folder] = []byte(c)
	}
	return r, intents
}

// TestExecuServeVerdicts holds each of ExecuServe's rules against the every-backend layout
// with one thing broken, and checks the rule and the file its problem names.
func TestExecuServeVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     map[string]func(string) string
		rule     string
		file     string
		warnings int
	}{
		{name: "as publish writes it"},
		{name: "MediaTek named mediatek", rule: RuleESTarget, file: "mtk/mt6991/m-2k-chunk1of2.pte",
			edit: map[string]func(string) string{"mtk/mt6991": func(s string) string { return strings.Replace(s, `"backend":"mtk"`, `"backend":"mediatek"`, 1) }}},
		{name: "a target on the CPU folder", rule: RuleESTarget, file: "xnnpack/m-2k.pte",
			edit: map[string]func(string) string{"xnnpack": func(s string) string { return strings.Replace(s, `"target":null`, `"target":"any arm64"`, 1) }}},
		{name: "a QNN folder without its chip", rule: RuleESTarget, file: "qnn/sm8750/m-qnn-2k.pte",
			edit: map[string]func(string) string{"qnn/sm8750": func(s string) string { return strings.Replace(s, `"target":"sm8750"`, `"target":null`, 1) }}},
		{name: "a context of the wrong type", rule: RuleESConfig, file: "vulkan/m-vulkan-2k.pte",
			edit: map[string]func(string) string{"vulkan": func(s string) string { return strings.Replace(s, `"context":2048`, `"context":"2048"`, 1) }}},
		{name: "a MediaTek window without its XNNPACK twin", rule: RuleESTwin, file: "mtk/mt6991/m-4k-chunk1of2.pte",
			edit: map[string]func(string) string{"xnnpack": func(s string) string { return strings.Replace(s, `"context":4096`, `"context":8192`, 1) }}},
		{name: "chunks without their runner", rule: RuleESVariant, file: "mtk/mt6991/m-2k-chunk1of2.pte",
			edit: map[string]func(string) string{"mtk/mt6991": func(s string) string { return strings.Replace(s, `,"runner":{"cache_size":2048}`, ``, 1) }}},
		{name: "a file older than the runtime by two minors", warnings: 1,
			edit: map[string]func(string) string{"vulkan": func(s string) string { return strings.Replace(s, `"1.5.1"`, `"1.3.0"`, 1) }}},
		{name: "a file one minor older", edit: map[string]func(string) string{"vulkan": func(s string) string { return strings.Replace(s, `"1.5.1"`, `"1.4.0"`, 1) }}},
		{name: "a file newer by a patch", warnings: 1,
			edit: map[string]func(string) string{"vulkan": func(s string) string { return strings.Replace(s, `"1.5.1"`, `"1.5.2"`, 1) }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, intents := esRepo(tc.edit)
			v := BuildExecuServe(r, intents)
			require.Len(t, v.Folders, 4)
			require.Len(t, v.Warnings, tc.warnings, v.Warnings)
			if tc.rule == "" {
				require.Empty(t, v.Problems)
				for _, f := range v.Folders {
					require.Empty(t, f.Dropped, f.Folder)
					for _, e := range f.Variants {
						require.True(t, e.Offered, "%s: %s", e.File, e.Dropped)
					}
				}
				var text bytes.Buffer
				require.NoError(t, v.WriteText(&text))
				require.Contains(t, text.String(), "mtk/mt6991/: read on MediaTek MT6991 phones whose NeuroPilot adapter and runner load")
				require.Contains(t, text.String(), "qnn/sm8750/: read on Qualcomm SM8750 phones")
				return
			}
			var got []string
			for _, p := range v.Problems {
				got = append(got, p.Rule+" "+p.File)
			}
			require.Contains(t, got, tc.rule+" "+tc.file)
		})
	}
}

// TestExecuServeReadsOnlyItsFolders: a config.json outside xnnpack/, vulkan/, qnn/<soc>/ and
// mtk/<soc>/ is never read, and a chip folder named with capitals is not the one it lists.
func TestExecuServeReadsOnlyItsFolders(t *testing.T) {
	for _, folder := range []string{"mediatek/mt6991", "mtk/MT6991", "npu5", ""} {
		require.Empty(t, esRunsOn(folder), folder)
	}
	require.Equal(t, "every phone", esRunsOn("xnnpack"))

	// Ours in a chip folder named with capitals is dropped, and a problem; a backend
	// ExecuServe does not run (a new NPU's folder) is shown as not read, and is not one.
	r := Repo{ID: "experimentalmachines/Qwen3-0.6B-ExecuTorch", Files: []File{{"tokenizer.json", 1}},
		Configs: map[string][]byte{"mtk/MT6991": []byte(`{"variants":[]}`), "npu5": []byte(`{"variants":[]}`)}}
	v := BuildExecuServe(r, map[string]Intent{"mtk/MT6991/m-2k-chunk1of2.pte": {}, "npu5/m-2k.pte": {}})
	require.Len(t, v.Folders, 2)
	require.Len(t, v.Problems, 1)
	require.Equal(t, RuleESFolder, v.Problems[0].Rule)
	require.Equal(t, "mtk/MT6991/m-2k-chunk1of2.pte", v.Problems[0].File)
	require.NotEmpty(t, v.Folders[1].Dropped, "npu5 is not read")
}
