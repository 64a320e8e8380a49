package recipe_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/family"
	"github.com/experimentalmachines/exe-expo/internal/mtkoverlay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real-source test holds every golden recipe to the pinned ExecuTorch's own files, kept
// unmodified in testdata/executorch-v1.5.1 (its NOTE.md says where from):
// testdata/check_executorch.py loads each export_llm YAML into the real LlmConfig with
// OmegaConf's strict structured merge, builds ModelArgs from each params file as the eager
// model does, and parses each Qualcomm and MediaTek argv with the real parsers.

// etTree is the kept ExecuTorch source, relative to this package.
var etTree = filepath.Join("testdata", "executorch-v1.5.1")

// omegaPython is Debian's python3 with python3-omegaconf (the library export_llm merges
// its YAML with); the test skips without it, and fails under EXE_EXPO_CI=1, where .ci/run
// has installed it.
func omegaPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	out, err := exec.Command(py, "-c", "import omegaconf").CombinedOutput()
	if err == nil {
		return py
	}
	msg := fmt.Sprintf("%s cannot import omegaconf (%v: %s)", py, err, strings.TrimSpace(string(out)))
	if os.Getenv("EXE_EXPO_CI") == "1" {
		t.Fatalf("EXE_EXPO_CI=1 and %s; .ci/run installs python3-omegaconf with apt", msg)
	}
	t.Skipf("skipping the real-source test: %s (apt-get install -y python3-omegaconf)", msg)
	return ""
}

// manifest is check_executorch.py's input.
type manifest struct {
	Goldens      []string          `json:"goldens"`
	ExecuTorch   string            `json:"executorch"`
	Overlay      string            `json:"overlay,omitempty"`
	ModelClasses []string          `json:"model_classes"`
	LLMClasses   []family.LLMClass `json:"llm_classes"`
	QNNDecoders  map[string]string `json:"qnn_decoders"`
	QNNParams    map[string]string `json:"qnn_params"`
	QNNSeqMSE    map[string]int    `json:"qnn_seq_mse"`
}

type failure struct {
	File  string `json:"file"`
	Part  string `json:"part"`
	Error string `json:"error"`
}

// verdict is check_executorch.py's output: which golden (or class) passed which part, and
// every failure with its reason.
type verdict struct {
	Checked  map[string][]string `json:"checked"`
	Failures []failure           `json:"failures"`
}

// familyManifest is the manifest for goldens with exe-expo's own tables, and the MediaTek
// overlay applied (as export applies it) to the kept examples/mediatek, so a script the release
// lacks is read from the overlay.
func familyManifest(t *testing.T, goldens []string) manifest {
	t.Helper()
	overlay := filepath.Join(t.TempDir(), "mediatek")
	require.NoError(t, mtkoverlay.Apply(filepath.Join(etTree, "examples", "mediatek"), overlay, "lfm2"))
	return manifest{
		Goldens: goldens, ExecuTorch: request(t, "Qwen/Qwen3-0.6B", "qnn", 2048, "").ExecuTorch, Overlay: overlay,
		ModelClasses: family.ModelClasses(), LLMClasses: family.LLMClasses,
		QNNDecoders: family.QNNDecoders, QNNParams: family.QNNParams, QNNSeqMSE: family.QNNSeqMSECandidates,
	}
}

func runCheck(t *testing.T, py string, m manifest) verdict {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.json")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	for _, s := range []string{"check_executorch.py", "etsource.py"} {
		os.Stat(filepath.Join("testdata", s)) // lets go test's cache see changes to the scripts
	}
	cmd := exec.Command(py, filepath.Join("testdata", "check_executorch.py"), path)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "check_executorch.py: %s", stderr.String())
	var v verdict
	require.NoError(t, json.Unmarshal(out, &v), "check_executorch.py printed %s", out)
	return v
}

// goldenParts lists, per part the script checks, the goldens that must pass it: every
// golden with an export_llm YAML has it and its params checked, every QNN and MediaTek
// golden its argv.
func goldenParts(t *testing.T, paths []string) map[string][]string {
	t.Helper()
	want := map[string][]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var head struct{ Backend string }
		require.NoError(t, json.NewDecoder(bytes.NewReader(b)).Decode(&head), p)
		name := filepath.Base(p)
		if bytes.Contains(b, []byte("\n--- export_llm.yaml\n")) {
			want["export_llm.yaml"] = append(want["export_llm.yaml"], name)
			want["params.json"] = append(want["params.json"], name)
		}
		switch head.Backend {
		case "qnn":
			want["qnn argv"] = append(want["qnn argv"], name)
		case "mediatek":
			want["mediatek argv"] = append(want["mediatek argv"], name)
		}
	}
	return want
}

// TestRealSource: every golden recipe, every model class exe-expo names and the Qualcomm
// tables pass ExecuTorch 1.5.1's own code, and each was really checked.
func TestRealSource(t *testing.T) {
	py := omegaPython(t)
	goldens, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	v := runCheck(t, py, familyManifest(t, goldens))
	for _, f := range v.Failures {
		t.Errorf("%s, %s: %s", f.File, f.Part, f.Error)
	}
	want := goldenParts(t, goldens)
	want["model_class"] = family.ModelClasses()
	want["qnn tables"] = []string{"family"}
	for part := range want {
		sort.Strings(want[part])
		sort.Strings(v.Checked[part])
	}
	assert.Equal(t, want, v.Checked, "what passed, per part")
	assert.NotEmpty(t, want["qnn argv"], "a Qualcomm golden")
	assert.NotEmpty(t, want["mediatek argv"], "a MediaTek golden")
}

// spoilt is a golden with one edit the real source must refuse.
type spoilt struct {
	name, golden string
	old, new     string // replaced once in the golden
	part, error  string // the failure expected, on that golden
}

var spoilts = []spoilt{
	{"unknown LlmConfig key", "qwen3-xnnpack-8k", "  use_kv_cache: true\n", "  use_kv_cache: true\n  use_kv_cash: true\n",
		"export_llm.yaml", "ConfigKeyError: Key 'use_kv_cash' not in 'ModelConfig'"},
	{"model_class not registered", "qwen3-xnnpack-8k", "model_class: qwen3_1_7b\n", "model_class: qwen3_1_7\n",
		"export_llm.yaml", "ValidationError: Invalid value 'qwen3_1_7', expected one of ["},
	{"bad dtype enum", "qwen3-vulkan-4k", "dtype_override: fp32", "dtype_override: fp64",
		"export_llm.yaml", "ValidationError: Invalid value 'fp64', expected one of [fp32, fp16, bf16]"},
	{"a number that is not one", "qwen3-xnnpack-8k", "max_seq_length: 2048", "max_seq_length: 2k",
		"export_llm.yaml", "ValidationError: Value '2k' of type 'str' could not be converted to Integer"},
	{"qmode LlmConfig does not know", "qwen3-xnnpack-8k", "qmode: 8da4w\n", "qmode: 8da5w\n",
		"export_llm.yaml", "ValueError: Got qmode 8da5w, but expected one of"},
	{"metadata that is not JSON", "qwen3-xnnpack-8k", `metadata: '{"get_bos_id"`, `metadata: '{get_bos_id`,
		"export_llm.yaml", "JSONDecodeError: Expecting property name enclosed in double quotes"},
	{"params key ModelArgs lacks", "qwen3-xnnpack-8k", "\n--- params.json\n{\n", "\n--- params.json\n{\n  \"n_expert\": 4,\n",
		"params.json", "TypeError: ModelArgs.__init__() got an unexpected keyword argument 'n_expert'"},
	{"params value of the wrong type", "qwen3-xnnpack-8k", "\n--- params.json\n{\n", "\n--- params.json\n{\n  \"output_bias\": \"no\",\n",
		"params.json", "TypeError: params key output_bias is 'no', and ModelArgs declares <class 'bool'>"},
	{"Llama 3 scaling under a class that scales by 8", "llama3.2-xnnpack-32k", "model_class: llama3_2\n", "model_class: llama3\n",
		"params.json", "ValueError: use_scaled_rope under model_class llama3 gives rope_scale_factor 8, not 32"},
	{"unknown Qualcomm flag", "qwen3-qnn-sm8750-4k", `"--compile_only",`, `"--compile_only", "--sharding", "2",`,
		"qnn argv", "error: unrecognized arguments: --sharding 2"},
	{"Qualcomm decoder not registered", "qwen3-qnn-sm8750-4k", `"--decoder_model",` + "\n        \"qwen3-0_6b\"", `"--decoder_model", "qwen3-0_5b"`,
		"qnn argv", "argument --decoder_model: invalid choice: 'qwen3-0_5b'"},
	{"Qualcomm chip 1.5.1 lacks", "qwen3-qnn-sm8750-4k", `"--soc_model",` + "\n        \"SM8750\"", `"--soc_model", "SM9999"`,
		"qnn argv", "LookupError: --soc_model SM9999 is not in utils.py's get_soc_to_chipset_map"},
	{"params file 1.5.1 lacks", "qwen3-qnn-sm8750-4k", "/opt/executorch/examples/models/qwen3/config/0_6b_config.json", "/opt/executorch/examples/models/qwen3/config/0_6b.json",
		"qnn argv", "FileNotFoundError: ExecuTorch 1.5.1 has no examples/models/qwen3/config/0_6b.json"},
	{"unknown MediaTek flag", "qwen3-mediatek-mt6991-2k", `"--platform",`, `"--chip", "mt6991", "--platform",`,
		"mediatek argv", "error: unrecognized arguments: --chip mt6991"},
	{"MediaTek precision 1.5.1 lacks", "qwen3-mediatek-mt6991-2k", `"--precision",` + "\n        \"A16W8\"", `"--precision", "A16W6"`,
		"mediatek argv", "argument -p/--precision: invalid choice: 'A16W6'"},
	{"MediaTek shape out of format", "qwen3-mediatek-mt6991-2k", `"128t2048c",`, `"128t2048",`,
		"mediatek argv", "RuntimeError: Shape 128t2048 is in the wrong format"},
	{"MediaTek chunks collected under another name", "qwen3-mediatek-mt6991-2k", "_4_chunks_2.pte\"", "_4_chunk_2.pte\"",
		"mediatek argv", "ValueError: chunk 2 is collected from"},
	{"MediaTek template 1.5.1 lacks", "qwen3-mediatek-mt6991-2k", "preformatter_templates/qwen3.json\"", "preformatter_templates/qwen4.json\"",
		"mediatek argv", "FileNotFoundError: ExecuTorch 1.5.1's examples/mediatek has no aot_utils/llm_utils/preformatter_templates/qwen4.json"},
}

// TestRealSourceRefuses: the real-source check is not vacuous. An unknown key, a bad enum
// value, a malformed value, an unknown flag, an unregistered name or a file 1.5.1 does not
// have each fails it, on that golden and that part, with upstream's own reason.
func TestRealSourceRefuses(t *testing.T) {
	py := omegaPython(t)
	dir := t.TempDir()
	var paths []string
	for _, s := range spoilts {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", s.golden+".golden"))
		require.NoError(t, err)
		require.Equal(t, 1, bytes.Count(b, []byte(s.old)), "%s: %q must occur once in %s", s.name, s.old, s.golden)
		p := filepath.Join(dir, strings.ReplaceAll(s.name, " ", "_")+".golden")
		require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte(s.old), []byte(s.new), 1), 0o644))
		paths = append(paths, p)
	}
	m := familyManifest(t, paths)
	m.ModelClasses, m.LLMClasses = nil, nil
	v := runCheck(t, py, m)
	for _, s := range spoilts {
		t.Run(s.name, func(t *testing.T) {
			file := strings.ReplaceAll(s.name, " ", "_") + ".golden"
			var got []failure
			for _, f := range v.Failures {
				if f.File == file {
					got = append(got, f)
				}
			}
			require.Len(t, got, 1, "one failure for %s", file)
			assert.Equal(t, s.part, got[0].Part)
			assert.Contains(t, got[0].Error, s.error)
		})
	}
}

// TestRealSourceTables: a model class ExecuTorch does not register, a class whose shape is
// not its params file's, a Qualcomm decoder the registry lacks, and SeqMSE candidates
// other than the registry's each fail.
func TestRealSourceTables(t *testing.T) {
	py := omegaPython(t)
	m := familyManifest(t, []string{})
	m.ModelClasses = []string{"qwen3_8b", "qwen3_4b"}
	m.LLMClasses = []family.LLMClass{{Name: "qwen3_4b", Family: "qwen3", Params: "examples/models/qwen3/config/4b_config.json",
		Shape: family.Shape{Dim: 2048, Hidden: 9728, Heads: 32, KVHeads: 8, Layers: 36, Vocab: 151936}}}
	m.QNNDecoders = map[string]string{"Qwen/Qwen3-4B": "qwen3-4b", "Qwen/Qwen3-1.7B": "qwen3-0_6b"}
	m.QNNParams = map[string]string{}
	v := runCheck(t, py, m)
	assert.ElementsMatch(t, []failure{
		{File: "qwen3_8b", Part: "model_class", Error: "ValueError: 'qwen3_8b' is not a valid ModelType"},
		{File: "qwen3_4b", Part: "model_class", Error: "ValueError: qwen3_4b: dim is 2560 in examples/models/qwen3/config/4b_config.json, exe-expo has 2048"},
		{File: "family", Part: "qnn tables", Error: "ValueError: qwen3-0_6b is registered for Qwen/Qwen3-0.6B, not Qwen/Qwen3-1.7B"},
	}, v.Failures)

	m.QNNDecoders = map[string]string{"Qwen/Qwen3-1.7B": "qwen3-1_7b", "Qwen/Qwen3-0.6B": "qwen3-0_6b"}
	m.QNNSeqMSE = map[string]int{"qwen3-1_7b": 50}
	v = runCheck(t, py, m)
	assert.Contains(t, v.Failures, failure{File: "family", Part: "qnn tables",
		Error: "ValueError: qwen3-0_6b sets seq_mse_candidates = 50 in 1.5.1, and family.QNNSeqMSECandidates gives 0"})
}

// TestKeptSourceUnmodified: every file under testdata/executorch-v1.5.1 is listed in its
// NOTE.md with the git blob id of the pinned release's copy (NOTE.md says where each came from), and still hashes to it, so the
// real-source test cannot drift into testing an edited copy.
func TestKeptSourceUnmodified(t *testing.T) {
	note, err := os.ReadFile(filepath.Join(etTree, "NOTE.md"))
	require.NoError(t, err)
	listed := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([0-9a-f]{12})` \\| `([^`]+)` \\|").FindAllSubmatch(note, -1) {
		listed[string(m[2])] = string(m[1])
	}
	require.NotEmpty(t, listed, "NOTE.md lists the kept files")
	found := map[string]string{}
	require.NoError(t, filepath.WalkDir(etTree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "NOTE.md" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(etTree, p)
		sum := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...))
		found[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])[:12]
		return nil
	}))
	assert.Equal(t, listed, found, "kept files and their git blob ids against NOTE.md")
}
