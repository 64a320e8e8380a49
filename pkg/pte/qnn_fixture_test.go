package pte_test

import (
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/backend/qnn"
	"github.com/experimentalmachines/exe-expo/internal/check"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealQNN reads the Qualcomm hybrid stories260K program. Expected values come from its
// README (params dim 64, 5 layers, 4 KV heads, vocab 512, hybrid mode) and from
// static_llama's hard-coded BOS 1 / EOS 2, not from this reader.
func TestRealQNN(t *testing.T) {
	p, err := pte.OpenFile("testdata/stories260k_hybrid_llama_qnn.pte")
	if err != nil {
		t.Fatal(err)
	}
	if p.Header == nil || p.Header.Length != 32 || int64(p.Header.SegmentBaseOffset+p.Header.SegmentDataSize) != p.Size {
		t.Errorf("header %+v for a %d-byte file", p.Header, p.Size)
	}
	md := p.Metadata()
	if len(md) != 27 {
		t.Errorf("%d metadata methods, want 27: %v", len(md), md.Names())
	}
	wantInts := map[string]int64{"get_dim": 64, "get_n_layers": 5, "get_n_kv_heads": 4, "get_head_dim": 8,
		"get_vocab_size": 512, "get_bos_id": 1, "get_eos_id": 2, "get_max_batch_size": 1}
	for name, want := range wantInts {
		if got, ok := md.Int(name); !ok || got != want {
			t.Errorf("%s = %v, want %d", name, md[name], want)
		}
	}
	if v, ok := md.Bool("get_use_kv_cache"); !ok || !v {
		t.Errorf("get_use_kv_cache = %v", md["get_use_kv_cache"])
	}
	if _, ok := md["get_logits_scale"].(float64); !ok {
		t.Errorf("get_logits_scale = %#v, want a double", md["get_logits_scale"])
	}
	quant := 0
	for _, n := range md.Names() {
		if strings.HasPrefix(n, "get_kv_output_") {
			quant++
		}
	}
	layers := wantInts["get_n_layers"]
	if int64(quant) != 2*layers {
		t.Errorf("%d kv output quant attrs, want one per K and V cache (%d)", quant, 2*layers)
	}
	var offsets []int64
	for _, name := range []string{"kv_forward", "prefill_forward"} {
		m := p.Method(name)
		if m == nil {
			t.Fatalf("no %s; methods %v", name, p.MethodNames())
		}
		// tokens, position, mask, then one input per K and V cache; logits plus new caches out.
		if len(m.Inputs) != int(3+2*layers) || len(m.Outputs) != int(1+2*layers) {
			t.Errorf("%s: %d inputs, %d outputs", name, len(m.Inputs), len(m.Outputs))
		}
		if !cmp.Equal(m.Backends(), []string{pte.QnnBackend}) || m.Count(pte.InstrDelegateCall) != 1 {
			t.Errorf("%s: backends %v", name, m.Backends())
		}
		d := m.Delegates[0]
		if d.Signature != pte.SigQNN || d.CompileSpecs[0].Key != "qnn_compile_spec" {
			t.Errorf("%s delegate: signature %q, compile spec %q", name, d.Signature, d.CompileSpecs[0].Key)
		}
		offsets = append(offsets, d.BlobOffset)
	}
	if offsets[0] != offsets[1] {
		t.Errorf("kv and prefill blobs at %v, want one shared segment", offsets)
	}
	if r := check.Structural(p, qnn.Backend.Check, check.Expect{MaxContextLen: 128, MaxSeqLen: 128}); !r.Passed {
		t.Errorf("structural check failed: %v", r.Problems)
	}
	if r := check.Structural(p, qnn.Backend.Check, check.Expect{QNNMode: "kv", MaxContextLen: 4096}); r.Passed {
		t.Error("a 128-token file passed a 4096-token request")
	}
}

// TestRealQNNTokens checks the real program's BOS and EOS as inspect --backend qnn --bos 1
// --eos 2 does: Qualcomm's programs carry the singular get_eos_id, not get_eos_ids.
func TestRealQNNTokens(t *testing.T) {
	p, err := pte.OpenFile("testdata/stories260k_hybrid_llama_qnn.pte")
	require.NoError(t, err)
	require.NotContains(t, p.Metadata(), "get_eos_ids")
	bos := int64(1)
	r := check.Structural(p, qnn.Backend.Check, check.Expect{BOS: &bos, EOS: []int64{2}})
	assert.True(t, r.Passed, "problems %q", r.Problems)
	r = check.Structural(p, qnn.Backend.Check, check.Expect{EOS: []int64{2, 3}})
	assert.Equal(t, []string{"metadata get_eos_id is 2, the request was [2 3]"}, r.Problems)
}
