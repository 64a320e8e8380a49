package pte_test

import (
	"bytes"
	"testing"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/experimentalmachines/exe-expo/pkg/pte/ptetest"
	"github.com/google/go-cmp/cmp"
)

// mustSpec returns a function that unwraps a shape's Spec() result, failing t on error.
func mustSpec(t testing.TB) func(ptetest.Spec, error) ptetest.Spec {
	return func(s ptetest.Spec, err error) ptetest.Spec {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func open(t testing.TB, spec ptetest.Spec) *pte.Program {
	t.Helper()
	b, err := ptetest.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pte.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("open built program: %v", err)
	}
	return p
}

func TestBuiltLLM(t *testing.T) {
	tests := []struct {
		backend, id, sig string
		headerLen        int
	}{
		{"xnnpack", pte.XnnpackBackend, pte.SigXNNPACK, 32},
		{"xnnpack", pte.XnnpackBackend, pte.SigXNNPACK, 24},
		{"vulkan", pte.VulkanBackend, pte.SigVulkan, 32},
	}
	for _, tc := range tests {
		t.Run(tc.backend, func(t *testing.T) {
			md := ptetest.ExportLLMMetadata(2048, 8192, 128000, []int64{128009, 128001})
			md = append(md, ptetest.Meta{Name: "get_state_reset_at_zero", Value: 1},
				ptetest.Meta{Name: "rope_scale", Value: 0.5}, ptetest.Meta{Name: "tokenizer", Value: "tiktoken"})
			spec := mustSpec(t)(ptetest.LLM{Backend: tc.backend, Metadata: md, WeightsSize: 1000, BlobSize: 3000}.Spec())
			spec.HeaderLength = tc.headerLen
			p := open(t, spec)
			if p.Header == nil || p.Header.Length != uint32(tc.headerLen) {
				t.Fatalf("header %+v, want length %d", p.Header, tc.headerLen)
			}
			fwd := p.Method("forward")
			if fwd == nil || fwd.IsConstant() {
				t.Fatalf("forward missing or constant: %+v", fwd)
			}
			if got := fwd.Backends(); !cmp.Equal(got, []string{tc.id}) || fwd.Count(pte.InstrDelegateCall) != 1 {
				t.Errorf("forward backends %v with %d delegate calls", got, fwd.Count(pte.InstrDelegateCall))
			}
			d := fwd.Delegates[0]
			if d.Signature != tc.sig || d.Location != pte.Segment || d.BlobSize != 3000 {
				t.Errorf("delegate %+v, want %s blob of 3000 bytes in a segment", d, tc.sig)
			}
			if d.BlobOffset%128 != 0 || d.BlobOffset < int64(p.Header.SegmentBaseOffset) {
				t.Errorf("blob at %d is not a 128-aligned segment", d.BlobOffset)
			}
			want := pte.Metadata{
				"get_max_seq_len": int64(2048), "get_max_context_len": int64(8192), "get_n_layers": int64(2),
				"get_vocab_size": int64(512), "use_kv_cache": true, "use_sdpa_with_kv_cache": true,
				"enable_dynamic_shape": true, "get_bos_id": int64(128000), "get_eos_ids": []int64{128009, 128001},
				"get_state_reset_at_zero": int64(1), "rope_scale": 0.5, "tokenizer": "tiktoken",
			}
			if diff := cmp.Diff(want, p.Metadata()); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if len(p.NamedData) != 1 || len(p.NamedData[0].Key) != 64 || p.Segments[p.NamedData[0].SegmentIndex].Size != 1000 {
				t.Errorf("named data %+v, want one 64-hex key on a 1000-byte segment", p.NamedData)
			}
		})
	}
}

func TestBuiltEOSSingle(t *testing.T) {
	md := ptetest.ExportLLMMetadata(512, 512, -1, []int64{2})
	p := open(t, mustSpec(t)(ptetest.LLM{Backend: "xnnpack", Metadata: md}.Spec()))
	got := p.Metadata()
	if eos, _ := got.Ints("get_eos_ids"); !cmp.Equal(eos, []int64{2}) {
		t.Errorf("get_eos_ids %v (%T), want [2]", got["get_eos_ids"], got["get_eos_ids"])
	}
	if _, ok := got["get_bos_id"]; ok {
		t.Error("get_bos_id present, want absent")
	}
}

func TestBuiltQNN(t *testing.T) {
	for _, mode := range []string{"hybrid", "kv"} {
		t.Run(mode, func(t *testing.T) {
			p := open(t, mustSpec(t)(ptetest.QNN{Mode: mode}.Spec()))
			names := []string{"kv_forward"}
			if mode == "hybrid" {
				names = append(names, "prefill_forward")
			}
			var offsets []int64
			for _, n := range names {
				m := p.Method(n)
				if m == nil {
					t.Fatalf("method %s missing; have %v", n, p.MethodNames())
				}
				if !cmp.Equal(m.Backends(), []string{pte.QnnBackend}) || m.Delegates[0].Signature != pte.SigQNN {
					t.Errorf("%s: backends %v signature %q", n, m.Backends(), m.Delegates[0].Signature)
				}
				if cs := m.Delegates[0].CompileSpecs; len(cs) != 1 || cs[0].Key != "qnn_compile_spec" {
					t.Errorf("%s compile specs %+v", n, cs)
				}
				offsets = append(offsets, m.Delegates[0].BlobOffset)
			}
			if mode == "hybrid" && offsets[0] != offsets[1] {
				t.Errorf("kv and prefill blobs at %v, want one shared segment", offsets)
			}
			md := p.Metadata()
			if v, _ := md.Int("get_max_context_len"); v != 512 {
				t.Errorf("get_max_context_len %v", md["get_max_context_len"])
			}
			if v, ok := md.Bool("get_use_kv_cache"); !v || !ok {
				t.Errorf("get_use_kv_cache %v", md["get_use_kv_cache"])
			}
		})
	}
}

func TestBuiltMediaTek(t *testing.T) {
	c := ptetest.MediaTekChunk{Exp: "Qwen3-0.6B_A16W4_4_chunks", PromptTokens: 128, Window: 2048, Chunk: 2, WeightsSize: 5000}
	p := open(t, mustSpec(t)(c.Spec()))
	want := []string{"Qwen3-0.6B_A16W4_4_chunks_128t2048c_2", "Qwen3-0.6B_A16W4_4_chunks_1t2048c_2"}
	if !cmp.Equal(p.MethodNames(), want) {
		t.Fatalf("methods %v, want %v", p.MethodNames(), want)
	}
	for _, m := range p.Methods {
		if !cmp.Equal(m.Backends(), []string{pte.NeuropilotBackend}) {
			t.Errorf("%s backends %v", m.Name, m.Backends())
		}
		specs := map[string]string{}
		for _, cs := range m.Delegates[0].CompileSpecs {
			specs[cs.Key] = string(cs.Value)
		}
		if specs["ExtractSharedBlobKey"] != "Qwen3-0.6B_A16W4_4_chunks_2" || specs["platform-config"] != "mt6991" {
			t.Errorf("%s compile specs %v", m.Name, specs)
		}
	}
	if len(p.Metadata()) != 0 {
		t.Errorf("metadata %v, want none on a MediaTek chunk", p.Metadata())
	}
	if len(p.NamedData) != 1 || p.NamedData[0].Key != "Qwen3-0.6B_A16W4_4_chunks_2" {
		t.Errorf("named data %+v", p.NamedData)
	}
}

func TestBuiltNoHeaderInline(t *testing.T) {
	spec := ptetest.Spec{HeaderLength: -1, Methods: []ptetest.Method{
		{Name: "forward", Backend: pte.XnnpackBackend, Blob: ptetest.XNNPACKBlob(256)},
		{Name: "plain"},
	}}
	p := open(t, spec)
	if p.Header != nil || len(p.Segments) != 0 {
		t.Fatalf("header %+v segments %v, want neither", p.Header, p.Segments)
	}
	d := p.Method("forward").Delegates[0]
	if d.Location != pte.Inline || d.Signature != pte.SigXNNPACK || d.BlobSize != 256 {
		t.Errorf("inline delegate %+v", d)
	}
	if d.Graph == nil || d.Graph.Linears != 1 {
		t.Errorf("inline delegate's graph %+v (%s), want its one FullyConnected node", d.Graph, d.GraphError)
	}
	plain := p.Method("plain")
	if plain.Count(pte.InstrKernelCall) != 1 || plain.Operators[0].Name != "aten::add" {
		t.Errorf("plain method %+v", plain)
	}
}

// TestWriteMatchesBuild checks that the streaming and sparse writers produce the same
// bytes as Build.
func TestWriteMatchesBuild(t *testing.T) {
	spec := mustSpec(t)(ptetest.LLM{Backend: "vulkan", WeightsSize: 300000,
		Metadata: ptetest.ExportLLMMetadata(128, 128, 1, []int64{2})}.Spec())
	built, err := ptetest.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	var streamed bytes.Buffer
	if n, err := ptetest.Write(&streamed, spec); err != nil || n != int64(len(built)) {
		t.Fatalf("Write: %d bytes, %v", n, err)
	}
	if !bytes.Equal(built, streamed.Bytes()) {
		t.Error("Write and Build differ")
	}
	path := t.TempDir() + "/m.pte"
	if err := ptetest.WriteFile(path, spec); err != nil {
		t.Fatal(err)
	}
	p, err := pte.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Size != int64(len(built)) {
		t.Errorf("file size %d, want %d", p.Size, len(built))
	}
}
