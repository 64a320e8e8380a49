package check_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend"
	_ "github.com/experimentalmachines/exe-expo/internal/backend/all" // the specs under test are the backends' own
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builder returns a function that builds and opens a Spec() result, failing t on error.
func builder(t *testing.T) func(spec ptetest.Spec, err error) *pte.Program {
	return func(spec ptetest.Spec, err error) *pte.Program {
		t.Helper()
		require.NoError(t, err)
		b, err := ptetest.Build(spec)
		require.NoError(t, err)
		p, err := pte.Open(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		return p
	}
}

func ptr(v int64) *int64 { return &v }

// spec is the named backend's structural expectations, as its definition states them.
func spec(name string) check.Spec {
	b := backend.ByName(name)
	if b == nil {
		panic("no backend " + name)
	}
	return b.Check
}

func llmMeta(extra ...ptetest.Meta) []ptetest.Meta {
	return append(ptetest.ExportLLMMetadata(2048, 4096, 1, []int64{2, 7}), extra...)
}

// structuralCase checks one program, named by its key in structuralPrograms, against a
// backend's structural spec and a request's expectations.
type structuralCase struct {
	name    string
	prog    string
	backend string
	want    check.Expect
	errs    []string
}

var (
	structuralChunk   = ptetest.MediaTekChunk{Exp: "Qwen3-0.6B_A16W4_4_chunks", PromptTokens: 128, Window: 2048, Chunk: 1}
	structuralMTKWant = check.MediaTekChunk{Exp: structuralChunk.Exp, PromptTokens: 128, Window: 2048, Chunk: 1}
	structuralRequest = check.Expect{MaxSeqLen: 2048, MaxContextLen: 4096, BOS: ptr(1), EOS: []int64{2, 7}}
)

// structuralPrograms builds the programs the structural cases refer to by key: each one
// right or wrong in one way a real export can be.
func structuralPrograms(t *testing.T) map[string]*pte.Program {
	t.Helper()
	program := builder(t)
	return map[string]*pte.Program{
		"xnn":   program(ptetest.LLM{Backend: "xnnpack", Metadata: llmMeta(ptetest.Meta{Name: "get_state_reset_at_zero", Value: 1})}.Spec()),
		"vk":    program(ptetest.LLM{Backend: "vulkan", Metadata: llmMeta()}.Spec()),
		"noSeq": program(ptetest.LLM{Backend: "xnnpack", Metadata: []ptetest.Meta{{Name: "get_max_context_len", Value: 4096}}}.Spec()),
		"fakeBlob": program(ptetest.Spec{Methods: []ptetest.Method{{Name: "forward", Backend: pte.XnnpackBackend, Blob: ptetest.VulkanBlob(64)}},
			Metadata: llmMeta()}, nil),
		"hybrid": program(ptetest.QNN{}.Spec()),
		"kv":     program(ptetest.QNN{Mode: "kv"}.Spec()),
		"mtk":    program(structuralChunk.Spec()),
		"uncalled": program(ptetest.Spec{Methods: []ptetest.Method{{Name: "forward", Backend: pte.XnnpackBackend,
			Blob: ptetest.XNNPACKBlob(64), NoCall: true}}, Metadata: llmMeta()}, nil),
		"prefillOnly": program(ptetest.Spec{Methods: []ptetest.Method{{Name: "prefill_forward", Backend: pte.QnnBackend,
			Blob: ptetest.QNNBlob(64)}}, Metadata: ptetest.QNNMetadata(512, 32)}, nil),
		"kvOnCPU": program(ptetest.Spec{Methods: []ptetest.Method{{Name: "kv_forward", Backend: pte.XnnpackBackend,
			Blob: ptetest.XNNPACKBlob(64)}}, Metadata: ptetest.QNNMetadata(512, 32)}, nil),
		"qnnWithList": program(ptetest.QNN{Metadata: append(ptetest.QNNMetadata(512, 32),
			ptetest.Meta{Name: "get_eos_ids", Value: []int64{2, 7}})}.Spec()),
		"singularEOS": program(ptetest.LLM{Backend: "xnnpack", Metadata: []ptetest.Meta{{Name: "get_max_seq_len", Value: 128},
			{Name: "get_eos_id", Value: 2}}}.Spec()),
	}
}

var structuralCases = []structuralCase{
	{"xnnpack as requested", "xnn", "xnnpack", structuralRequest, nil},
	{"xnnpack extra metadata", "xnn", "xnnpack", check.Expect{Metadata: map[string]any{"get_state_reset_at_zero": 1, "use_kv_cache": true}}, nil},
	{"xnnpack other window", "xnn", "xnnpack", check.Expect{MaxContextLen: 8192, MaxSeqLen: 2048}, []string{
		"metadata get_max_context_len is 4096, the request was 8192"}},
	{"xnnpack wrong tokens", "xnn", "xnnpack", check.Expect{BOS: ptr(0), EOS: []int64{7, 2}}, []string{
		"metadata get_bos_id is 1, the request was 0",
		"metadata get_eos_ids is [2 7], the request was [7 2]"}},
	{"vulkan lacks LFM2 flag", "vk", "vulkan", check.Expect{Metadata: map[string]any{"get_state_reset_at_zero": 1}}, []string{
		"metadata get_state_reset_at_zero is missing, the request was 1"}},
	{"xnnpack file checked as vulkan", "xnn", "vulkan", check.Expect{}, []string{
		"forward does not run on VulkanBackend: delegates [XnnpackBackend], 1 delegate calls"}},
	{"no get_max_seq_len", "noSeq", "xnnpack", check.Expect{}, []string{
		"metadata get_max_seq_len is missing (the runner requires it)"}},
	{"xnnpack id with a vulkan blob", "fakeBlob", "xnnpack", check.Expect{}, []string{
		"forward delegate 0 is not a XH00 payload: its blob starts VH00"}},
	{"delegate listed but never called", "uncalled", "xnnpack", check.Expect{}, []string{
		"forward does not run on XnnpackBackend: delegates [XnnpackBackend], 0 delegate calls"}},
	{"qnn hybrid", "hybrid", "qnn", check.Expect{MaxContextLen: 512}, nil},
	{"qnn kv as kv", "kv", "qnn", check.Expect{QNNMode: "kv"}, nil},
	{"qnn kv mode without kv_forward", "prefillOnly", "qnn", check.Expect{QNNMode: "kv"}, []string{
		`missing decoder method "kv_forward" (has [get_ar_len, get_bos_id, get_eos_id, get_max_context_len, get_max_seq_len, get_n_layers, get_use_kv_cache, get_vocab_size, prefill_forward])`}},
	{"qnn kv mode with kv_forward on the CPU", "kvOnCPU", "qnn", check.Expect{QNNMode: "kv"}, []string{
		"kv_forward does not run on QnnBackend: delegates [XnnpackBackend], 1 delegate calls"}},
	{"qnn unknown mode", "hybrid", "qnn", check.Expect{QNNMode: "fast"}, []string{`unknown QNN mode "fast" (want hybrid or kv)`}},
	{"qnn singular eos as requested", "hybrid", "qnn", check.Expect{BOS: ptr(1), EOS: []int64{2}}, nil},
	{"qnn singular eos, two requested", "hybrid", "qnn", check.Expect{EOS: []int64{2, 7}}, []string{
		"metadata get_eos_id is 2, the request was [2 7]"}},
	{"qnn singular eos, other id", "kv", "qnn", check.Expect{QNNMode: "kv", EOS: []int64{3}}, []string{
		"metadata get_eos_id is 2, the request was [3]"}},
	{"qnn list wins over singular", "qnnWithList", "qnn", check.Expect{EOS: []int64{2}}, []string{
		"metadata get_eos_ids is [2 7], the request was [2]"}},
	{"qnn list as requested", "qnnWithList", "qnn", check.Expect{EOS: []int64{2, 7}}, nil},
	{"singular eos is QNN's only", "singularEOS", "xnnpack", check.Expect{EOS: []int64{2}}, []string{
		"metadata get_eos_ids is missing, the request was [2]"}},
	{"qnn kv as hybrid", "kv", "qnn", check.Expect{}, []string{
		`missing decoder method "prefill_forward" (has [get_ar_len, get_bos_id, get_eos_id, get_max_context_len, get_max_seq_len, get_n_layers, get_use_kv_cache, get_vocab_size, kv_forward])`}},
	{"qnn checked as xnnpack", "hybrid", "xnnpack", check.Expect{}, []string{
		`missing decoder method "forward" (has [get_ar_len, get_bos_id, get_eos_id, get_max_context_len, get_max_seq_len, get_n_layers, get_use_kv_cache, get_vocab_size, kv_forward, prefill_forward])`}},
	{"mediatek named", "mtk", "mediatek", check.Expect{MediaTek: structuralMTKWant}, nil},
	{"mediatek pattern", "mtk", "mediatek", check.Expect{}, nil},
	{"mediatek other chunk", "mtk", "mediatek", check.Expect{MediaTek: check.MediaTekChunk{Exp: structuralChunk.Exp, PromptTokens: 128, Window: 2048, Chunk: 0}}, []string{
		"methods are [Qwen3-0.6B_A16W4_4_chunks_128t2048c_1, Qwen3-0.6B_A16W4_4_chunks_1t2048c_1], " +
			"want [Qwen3-0.6B_A16W4_4_chunks_128t2048c_0, Qwen3-0.6B_A16W4_4_chunks_1t2048c_0]"}},
	{"qnn checked as mediatek", "kv", "mediatek", check.Expect{}, []string{
		"a MediaTek chunk has a prompt and a generation method, this file has [get_ar_len, get_bos_id, get_eos_id, get_max_context_len, get_max_seq_len, get_n_layers, get_use_kv_cache, get_vocab_size, kv_forward]",
		"get_ar_len does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_bos_id does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_eos_id does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_max_context_len does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_max_seq_len does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_n_layers does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_use_kv_cache does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"get_vocab_size does not run on NeuropilotBackend: delegates [], 0 delegate calls",
		"kv_forward does not run on NeuropilotBackend: delegates [QnnBackend], 1 delegate calls"}},
	{"a backend nothing is exported to", "xnn", "enn", check.Expect{}, []string{
		"enn has no structural check: nothing is exported to it"}},
}

// TestStructural checks each case's program: its problems are exactly the ones listed, and
// only a program with none passes.
func TestStructural(t *testing.T) {
	programs := structuralPrograms(t)
	for _, tc := range structuralCases {
		t.Run(tc.name, func(t *testing.T) {
			prog, ok := programs[tc.prog]
			require.True(t, ok, "no program %q", tc.prog)
			r := check.Structural(prog, spec(tc.backend), tc.want)
			want := tc.errs
			if want == nil {
				want = []string{}
			}
			assert.Empty(t, cmp.Diff(want, r.Problems), "problems (-want +got)")
			assert.Equal(t, len(tc.errs) == 0, r.Passed, "passed")
			assert.Equal(t, "structural", r.Kind)
		})
	}
}

func TestStructuralRealFile(t *testing.T) {
	p, err := pte.OpenFile("testdata/add.pte")
	require.NoError(t, err)
	r := check.Structural(p, spec("xnnpack"), check.Expect{})
	want := []string{
		"forward does not run on XnnpackBackend: delegates [], 0 delegate calls",
		"metadata get_max_seq_len is missing (the runner requires it)",
	}
	assert.Empty(t, cmp.Diff(want, r.Problems), "problems (-want +got)")
	assert.Equal(t, "structural check (xnnpack): failed: "+want[0]+"; "+want[1], r.Verdict())
	assert.Equal(t, map[string][]string{"forward": {}}, r.Delegates)
	assert.Equal(t, []string{"forward"}, r.Methods)
}

func TestMediaTekNamesAgree(t *testing.T) {
	c := ptetest.MediaTekChunk{Exp: "e", PromptTokens: 32, Window: 512, Chunk: 3}
	w := check.MediaTekChunk{Exp: "e", PromptTokens: 32, Window: 512, Chunk: 3}
	assert.Equal(t, c.MethodNames(), w.MethodNames(), "ptetest and check name a chunk's methods alike")
}

func TestStructuralFile(t *testing.T) {
	junk := t.TempDir() + "/junk.pte"
	require.NoError(t, os.WriteFile(junk, []byte("ET12 but not really a program"), 0o644))
	tests := []struct {
		path, want string
		passed     bool
	}{
		{"testdata/add.pte", "forward does not run on XnnpackBackend", false},
		{junk, "program did not load: read " + junk + ": not an ExecuTorch .pte file", false},
		{"testdata/missing.pte", "program did not load: open testdata/missing.pte", false},
	}
	for _, tc := range tests {
		r := check.StructuralFile(tc.path, spec("xnnpack"), check.Expect{})
		assert.Equal(t, tc.passed, r.Passed, tc.path)
		if assert.NotEmpty(t, r.Problems, tc.path) {
			assert.True(t, strings.HasPrefix(r.Problems[0], tc.want), "%s: problems %q, want the first to start %q", tc.path, r.Problems, tc.want)
		}
	}
}
