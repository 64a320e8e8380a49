package appview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/golden"
)

// seedRepo reads a testdata listing (paths, sizes, each folder's config.json).
func seedRepo(t *testing.T, name string) Repo {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var in struct {
		ID      string                     `json:"id"`
		Files   []File                     `json:"files"`
		Configs map[string]json.RawMessage `json:"configs"`
	}
	require.NoError(t, json.Unmarshal(raw, &in), name)
	r := Repo{ID: in.ID, Files: in.Files, Configs: map[string][]byte{}}
	for folder, c := range in.Configs {
		r.Configs[folder] = c
	}
	return r
}

func defaultPhones(t *testing.T) []Phone {
	t.Helper()
	cfg, err := config.Load("")
	require.NoError(t, err)
	return Phones(cfg.Export.PhoneClasses)
}

// appNames are the exe-expo backend folders' app names, as the backend registry gives
// them (kept literal here: appview's tests link no backend).
func appName(b string) string {
	if b == "mediatek" {
		return "neuropilot"
	}
	return b
}

// TestSeedLayouts holds appview to what the app shows for the two published repos whose
// cards are the seeds: every CPU and GPU .pte listed, each read as its own backend and as
// the repo's family, with the window it was exported at, the MediaTek chunks read as
// NeuroPilot and not offered (the app's Discover offers no NeuroPilot file since its chunks
// aborted it), the root tokenizer for every file, and no rule broken.
func TestSeedLayouts(t *testing.T) {
	for _, tc := range []struct {
		file, family string
		ptes         int
		// warned are the files the app offers a phone class that cannot hold them.
		warned []string
	}{
		{file: "seed-Qwen3-4B.json", family: "qwen3", ptes: 18,
			// 16k on the CPU: the app wants 2.69 GB × 2.4 + 450 MiB = 6.93 GB of a 12 GB
			// phone's 8.37, while the window holds 8.02 GB against the 6 GiB per-process limit
			// of a 12 GB phone; 16k on the GPU holds 8.84 GB, past a 16 GB phone's 8 GiB.
			warned: []string{"xnnpack/Qwen3-4B-8da4w-gptq-16k.pte", "xnnpack/Qwen3-4B-8da4w-gptq-32k.pte",
				"vulkan/Qwen3-4B-vulkan-8da4w-16k.pte", "vulkan/Qwen3-4B-vulkan-8da4w-32k.pte"}},
		{file: "seed-SmolLM2-360M-Instruct.json", family: "smollm2", ptes: 26,
			// 32k fp32 on the CPU: the app wants 4.10 GB of a 6 GB phone's 4.19, and the window
			// holds 4.69 GB against the 3 GiB per-process limit of a 6 GB phone (4 GiB on an
			// 8 GB one); 16k fp32 holds 3.34 GB, past the 6 GB phone's 3 GiB too.
			warned: []string{"vulkan/SmolLM2-360M-Instruct-vulkan-8da4w-32k.pte", "xnnpack/SmolLM2-360M-Instruct-fp32-16k.pte",
				"xnnpack/SmolLM2-360M-Instruct-fp32-32k.pte"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			repo := seedRepo(t, tc.file)
			v := Build(repo, defaultPhones(t), Intents(repo.Configs, appName))
			require.Len(t, v.Files, tc.ptes)
			require.Empty(t, v.Problems, "the published layout breaks no app rule")
			for _, e := range v.Files {
				require.Equal(t, !strings.HasPrefix(e.Path, "mtk/"), e.Listed, "%s: %s", e.Path, e.Dropped)
				require.Empty(t, e.Refused, e.Path)
				require.Equal(t, tc.family, e.Family, e.Path)
				require.Equal(t, "tokenizer.json", e.Tokenizer, e.Path)
				folder := strings.SplitN(e.Path, "/", 2)[0]
				want := map[string]Backend{"xnnpack": XNNPACK, "vulkan": Vulkan, "mtk": NeuroPilot}[folder]
				require.Equal(t, want, e.Backend, e.Path)
				if folder == "mtk" {
					require.Zero(t, e.Window, "%s: the app reads no window for a chunk", e.Path)
					require.Empty(t, e.Runs, e.Path)
					require.Contains(t, e.Dropped, "offers no NeuroPilot file", e.Path)
				} else {
					require.Equal(t, e.Exported, e.Window, e.Path)
					require.NotZero(t, e.Window, e.Path)
				}
			}
			var warned []string
			for _, w := range v.Warnings {
				if !strings.Contains(w, "no window") {
					warned = append(warned, w[:strings.Index(w, ":")])
				}
			}
			require.Empty(t, cmp.Diff(tc.warned, warned))

			var text bytes.Buffer
			require.NoError(t, v.WriteText(&text))
			golden.Check(t, filepath.Join("testdata", "golden", strings.TrimSuffix(tc.file, ".json")+".txt"), text.Bytes())
			js, err := json.MarshalIndent(v, "", "  ")
			require.NoError(t, err)
			golden.Check(t, filepath.Join("testdata", "golden", strings.TrimSuffix(tc.file, ".json")+".json"), append(js, '\n'))
		})
	}
}

// xnnpackConfig is an exe-expo config.json for one folder, one single-program variant per
// (file, window).
func xnnpackConfig(backend string, variants ...any) []byte {
	var vs []string
	for i := 0; i+1 < len(variants); i += 2 {
		vs = append(vs, fmt.Sprintf(`{"file":%q,"context":%d,"methods":{"get_max_context_len":%d,"get_max_seq_len":%d}}`, variants[i], variants[i+1], variants[i+1], variants[i+1]))
	}
	return []byte(fmt.Sprintf(`{"backend":%q,"variants":[%s]}`, backend, strings.Join(vs, ",")))
}

// TestBrokenRepos holds each rule against a repo that breaks it, and checks that the
// problem names the rule and the file.
func TestBrokenRepos(t *testing.T) {
	for _, tc := range []struct {
		name     string
		repo     func() Repo
		rule     string
		file     string
		contains string
	}{
		{"the 41st smallest .pte", brokenManyRepo, RuleFirst40, "xnnpack/Qwen3-1.7B-8da4w-41k.pte", "41st"},
		{"a CPU file named for another backend", func() Repo {
			return brokenRenamedRepo("Qwen3-1.7B-vulkan-8da4w-2k.pte")
		}, RuleBackend, "xnnpack/Qwen3-1.7B-vulkan-8da4w-2k.pte", "reads its backend as vulkan"},
		{"a repo name the app reads no family from", func() Repo {
			r := brokenRenamedRepo("MyModel-1.7B-8da4w-2k.pte")
			r.ID = "experimentalmachines/MyModel-1.7B-ExecuTorch"
			return r
		}, RuleFamily, "xnnpack/MyModel-1.7B-8da4w-2k.pte", "reads no chat-template family"},
		{"decoder in the file name hides coder", func() Repo {
			return brokenRenamedRepo("Qwen3-1.7B-decoder-2k.pte")
		}, RuleFamily, "xnnpack/Qwen3-1.7B-decoder-2k.pte", `"coder" no longer appears`},
		{"a variant file that is not a bare name", func() Repo {
			r := brokenGoodRepo()
			r.Configs["xnnpack"] = []byte(`{"backend":"xnnpack","variants":[{"file":"xnnpack/Qwen3-1.7B-8da4w-2k.pte","context":2048,"methods":{"get_max_context_len":2048}}]}`)
			return r
		}, RuleWindow, "xnnpack/Qwen3-1.7B-8da4w-2k.pte", "bare name"},
		{"a config.json over a mebibyte", func() Repo {
			r := brokenGoodRepo()
			cfg := xnnpackConfig("xnnpack", "Qwen3-1.7B-8da4w-2k.pte", 2048)
			r.Configs["xnnpack"] = append(cfg[:len(cfg)-1], []byte(`,"pad":"`+strings.Repeat("x", MaxConfigBytes)+`"}`)...)
			return r
		}, RuleWindow, "xnnpack/Qwen3-1.7B-8da4w-2k.pte", "reads at most"},
		{"a tokenizer in another backend's folder", func() Repo {
			r := brokenGoodRepo()
			r.Files = append(r.Files, File{"vulkan/tokenizer.json", 1}, File{"vulkan/Qwen3-1.7B-vulkan-8da4w-2k.pte", brokenGB})
			r.Configs["vulkan"] = xnnpackConfig("vulkan", "Qwen3-1.7B-vulkan-8da4w-2k.pte", 2048)
			return r
		}, RuleTokenizer, "xnnpack/Qwen3-1.7B-8da4w-2k.pte", "refuses to pair nested weights with the root one"},
		{"a tokenizer in the file's own folder", func() Repo {
			r := brokenGoodRepo()
			r.Files = append(r.Files, File{"xnnpack/tokenizer.json", 1})
			return r
		}, RuleTokenizer, "xnnpack/Qwen3-1.7B-8da4w-2k.pte", "pairs it with xnnpack/tokenizer.json"},
		{"no tokenizer at all", func() Repo {
			r := brokenGoodRepo()
			r.Files = r.Files[1:]
			return r
		}, RuleTokenizer, "", "lists none of its .pte files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.repo()
			intents := Intents(r.Configs, nil)
			// What exe-expo built is known from its reports, whatever config.json says.
			intents["xnnpack/Qwen3-1.7B-8da4w-2k.pte"] = Intent{Backend: "xnnpack", Window: 2048}
			v := Build(r, defaultPhones(t), intents)
			var hit *Problem
			for i, p := range v.Problems {
				if p.Rule == tc.rule && p.File == tc.file {
					hit = &v.Problems[i]
				}
			}
			require.NotNil(t, hit, "want a %s problem for %q; got %v", tc.rule, tc.file, v.Problems)
			require.Contains(t, hit.String(), tc.contains)
			require.NotEmpty(t, hit.Fix)
		})
	}
	t.Run("the good repo breaks nothing", func(t *testing.T) {
		r := brokenGoodRepo()
		require.Empty(t, Build(r, defaultPhones(t), Intents(r.Configs, nil)).Problems)
	})
}

// TestBackendOf is the app's reading on the names its own tests use, and on ours.
func TestBackendOf(t *testing.T) {
	for _, tc := range []struct {
		repo, path string
		want       Backend
	}{
		{"larryliu0820/Qwen3-1.7B-INT8-INT4-ExecuTorch-XNNPACK", "model.pte", XNNPACK},
		{"l3utterfly/Qwen-3-1.7B-qnn-executorch", "model.pte", QNN},
		{"someone/Llama-3.2-1B-mediatek-mdla", "model.pte", NeuroPilot},
		{"executorch-community/SmolLM2-135M", "model.pte", Unknown},
		{"kennedy/Qwen3-1.7B-ExecuTorch-XNNPACK", "model.pte", XNNPACK},
		{"someone/perennial-model", "model.pte", Unknown},
		{"experimentalmachines/Qwen3-1.7B-ExecuTorch", "enn/e9955/model.pte", ENN},
		{"experimentalmachines/Qwen3-1.7B-ExecuTorch", "vgf/model-vgf-2k.pte", VGF},
		{"software-mansion/react-native-executorch-lfm-2.5", "1_2b/mlx/lfm_2_5_1_2b_mlx_int4.pte", MLX},
		// the path first: an XNNPACK repo's vulkan/ file is a GPU file
		{"someone/Qwen3-ExecuTorch-XNNPACK", "vulkan/model.pte", Vulkan},
		// the marker named last wins
		{"someone/Qwen3", "xnnpack/Qwen3-vulkan-2k.pte", Vulkan},
		{"experimentalmachines/Qwen3-4B-ExecuTorch", "mtk/mt6991/Qwen3-4B-neuropilot-a16w8-2k-chunk1of4.pte", NeuroPilot},
		{"experimentalmachines/Qwen3-4B-ExecuTorch", "qnn/sm8650/Qwen3-4B-qnn-16a4w-2k.pte", QNN},
	} {
		require.Equal(t, tc.want, BackendOf(tc.repo, tc.path), "%s %s", tc.repo, tc.path)
	}
}

func TestInstalledName(t *testing.T) {
	for _, tc := range []struct{ repo, path, want string }{
		{"larryliu0820/Qwen3-1.7B-INT8-INT4-ExecuTorch-XNNPACK", "model.pte", "Qwen3-1.7B-INT8-INT4-ExecuTorch-XNNPACK.pte"},
		{"o/R", "1b/model.pte", "R-1b.pte"},
		{"o/R", "1_7b/xnnpack/smollm2_1_7b_xnnpack_8da4w.pte", "R-smollm2_1_7b_xnnpack_8da4w.pte"},
		{"o/Qwen3-ExecuTorch", "vulkan/Qwen3-8da4w.pte", "Qwen3-ExecuTorch-Qwen3-8da4w-vulkan.pte"},
		{"o/Qwen3-ExecuTorch", "vulkan/Qwen3-vulkan-8da4w.pte", "Qwen3-ExecuTorch-Qwen3-vulkan-8da4w.pte"},
		{"o/..", "model.pte", "model.pte"},
	} {
		require.Equal(t, tc.want, InstalledName(tc.repo, tc.path))
	}
}

func TestPairTokenizer(t *testing.T) {
	for _, tc := range []struct {
		toks          []string
		weights, want string
	}{
		{[]string{"tokenizer.json"}, "xnnpack/a.pte", "tokenizer.json"},
		{[]string{"tokenizer.model", "tokenizer.json"}, "a.pte", "tokenizer.json"},
		{[]string{"tokenizer.json", "1_2b/tokenizer.json"}, "1_2b/xnnpack/a.pte", "1_2b/tokenizer.json"},
		{[]string{"tokenizer.json", "1_2b/tokenizer.json"}, "3b/xnnpack/a.pte", ""},
		{[]string{"tokenizer.json", "1_2b/tokenizer.json"}, "a.pte", "tokenizer.json"},
		{nil, "a.pte", ""},
	} {
		require.Equal(t, tc.want, PairTokenizer(tc.toks, tc.weights), "%v %s", tc.toks, tc.weights)
	}
}

// TestWindows reads config.json as the app does, on the shapes of its own tests.
func TestWindows(t *testing.T) {
	got := Windows([]byte(`{"variants":[
	  {"file":"a.pte","methods":{"get_max_context_len":4096,"get_max_seq_len":2048}},
	  {"file":"static.pte","methods":{"forward":{"inputs":[{"shape":[1,2047]}]}}},
	  {"file":"dynamic.pte","methods":{"forward":{"inputs":[{"shape":[1,{"min":1,"max":8192}]}]}}},
	  {"file":"silent.pte","methods":{}},
	  {"files":["c1.pte","c2.pte"],"methods":{"get_max_context_len":2048}}]}`))
	require.Empty(t, cmp.Diff(map[string]int{"a.pte": 4096, "static.pte": 2048, "dynamic.pte": 8192}, got))
	require.Empty(t, Windows([]byte(`{"architectures":["Qwen3ForCausalLM"],"max_position_embeddings":40960}`)))
	require.Empty(t, Windows([]byte("not json")))
}

func TestSizeHintAndCeiling(t *testing.T) {
	require.Equal(t, "1.7B", SizeHint("Qwen3-1.7B-ExecuTorch"))
	require.Equal(t, "360M", SizeHint("SmolLM2-360M-Instruct-ExecuTorch"))
	require.Equal(t, "", SizeHint("Qwen2.5-Coder"))
	require.Equal(t, "2.6B", SizeHint("LFM2.5-2.6B-GGUF"))
	// 4 GiB at 65%, less 450 and 400 MiB, at 600 MiB a billion: 3B.
	require.Equal(t, 3, Phone{RAMGiB: 4}.ceilingBillions())
	require.False(t, withinCeiling("4B", 3))
	require.True(t, withinCeiling("", 3))
}

// TestAppFit is the app's estimate: the file times 2.4 plus 450 MiB against 65% of RAM
// (50% on a low-RAM phone), tight above 80% of that.
func TestAppFit(t *testing.T) {
	p := Phone{RAMGiB: 4}
	usable := Phone{RAMGiB: 4}.usable()
	for _, tc := range []struct {
		size int64
		want Fit
	}{
		{int64(float64(usable-appOverheadBytes) / 2.4 * 0.5), Comfortable},
		{int64(float64(usable-appOverheadBytes) / 2.4 * 0.95), Tight},
		{int64(float64(usable-appOverheadBytes)/2.4) + 1, WontRun},
	} {
		require.Equal(t, tc.want, appFit(tc.size, p), "%d bytes", tc.size)
	}
	require.Equal(t, WontRun, appFit(1<<30, Phone{RAMGiB: 2, LowRAM: true}))
}

// TestQNNFilesAreNotHeldToTheAppsWindow: a QNN file the app never runs is published for
// other runtimes, so a window the app cannot read in it is no problem.
func TestQNNFilesAreNotHeldToTheAppsWindow(t *testing.T) {
	r := Repo{ID: "experimentalmachines/Qwen3-1.7B-ExecuTorch",
		Files: []File{{"tokenizer.json", 1}, {"qnn/sm8650/Qwen3-1.7B-qnn-16a4w-2k.pte", 1e9}}}
	v := Build(r, defaultPhones(t), map[string]Intent{"qnn/sm8650/Qwen3-1.7B-qnn-16a4w-2k.pte": {Backend: "qnn", Window: 2048}})
	require.Empty(t, v.Problems)
	require.False(t, v.Files[0].Listed)
	require.Contains(t, v.Files[0].Dropped, "links no qnn delegate")
}

// TestFullQwen3Plan lays out every window and chip of plan's Qwen/Qwen3-1.7B (XNNPACK and
// Vulkan at 2k to 32k, QNN for SM8750 and SM8650, MediaTek MT6991 in four chunks from 512
// to 32k): 44 .pte files. The app keeps the 40 smallest; the four it cuts are QNN files
// (16k and 32k for each chip), which it never runs, so every file it can run is listed
// and nothing is refused. A second MediaTek chip would push every CPU and GPU file out,
// and a window's last chunk with them. The layout holds windows the plan now skips
// (MediaTek 32k for memory, QNN 8k to 32k past the job limit): the 34 files it builds
// all fall within the 40, and every one the app runs is listed. (plan lays the repo out so
// that a second chip cannot do that: internal/plan TestFullQwen3Layout.)
func TestFullQwen3Plan(t *testing.T) {
	repo := seedRepo(t, "plan-Qwen3-1.7B.json")
	built := repo
	built.Files = nil
	for _, f := range repo.Files {
		overLimit := strings.HasPrefix(f.Path, "qnn/") && strings.HasSuffix(f.Path, ".pte") && !strings.HasSuffix(f.Path, "-2k.pte") && !strings.HasSuffix(f.Path, "-4k.pte")
		if !overLimit && !strings.Contains(f.Path, "-a16w8-32k-") {
			built.Files = append(built.Files, f)
		}
	}
	bv := Build(built, defaultPhones(t), Intents(built.Configs, appName))
	require.Len(t, bv.Files, 34)
	for _, e := range bv.Files {
		require.LessOrEqual(t, e.Rank, MaxListed, e.Path)
		require.True(t, e.Runs == "" || e.Listed, "%s: %s", e.Path, e.Dropped)
	}
	require.Empty(t, bv.Problems)

	v := Build(repo, defaultPhones(t), Intents(repo.Configs, appName))
	require.Len(t, v.Files, 44)
	var cut []string
	for _, e := range v.Files {
		if e.Rank > MaxListed {
			cut = append(cut, e.Path)
			require.Equal(t, QNN, e.Backend)
		}
		if e.Runs != "" {
			require.True(t, e.Listed, "%s: %s", e.Path, e.Dropped)
			require.Equal(t, "qwen3", e.Family)
		}
	}
	require.Len(t, cut, 4)
	require.Empty(t, v.Problems)

	var text bytes.Buffer
	require.NoError(t, v.WriteText(&text))
	golden.Check(t, filepath.Join("testdata", "golden", "plan-Qwen3-1.7B.txt"), text.Bytes())

	// A second MediaTek chip (MT6989) adds 24 chunks smaller than every CPU and GPU file:
	// those are pushed past the 40, and publish would refuse them. The app offers no
	// MediaTek file, so the chunks cut lose nothing of the app's.
	for _, f := range append([]File(nil), repo.Files...) {
		if strings.HasPrefix(f.Path, "mtk/mt6991/") {
			repo.Files = append(repo.Files, File{"mtk/mt6989/" + strings.TrimPrefix(f.Path, "mtk/mt6991/"), f.Size})
		}
	}
	repo.Configs["mtk/mt6989"] = repo.Configs["mtk/mt6991"]
	v = Build(repo, defaultPhones(t), Intents(repo.Configs, appName))
	var refused []string
	for _, p := range v.Problems {
		require.Equal(t, RuleFirst40, p.Rule, p.String())
		refused = append(refused, p.File)
	}
	require.Contains(t, refused, "vulkan/Qwen3-1.7B-vulkan-8da4w-32k.pte")
	require.Contains(t, refused, "xnnpack/Qwen3-1.7B-8da4w-gptq-32k.pte")
	require.Len(t, refused, 10, "every XNNPACK and Vulkan window (the MediaTek chunks cut are files the app does not offer)")
}
