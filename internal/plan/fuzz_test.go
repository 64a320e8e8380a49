package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/plan"
	"github.com/experimentalmachines/exe-expo/internal/sizing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configOnly is a repo holding nothing but config.json, so Load computes the parameter
// count from the architecture, as for a folder without weights.
type configOnly []byte

func (c configOnly) ReadFile(_ context.Context, name string) ([]byte, error) {
	if name == "config.json" {
		return c, nil
	}
	return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
}

func (c configOnly) ReadRange(ctx context.Context, name string, off, n int64) ([]byte, error) {
	return c.ReadFile(ctx, name)
}

// FuzzPlanConfig feeds config.json bytes through the whole of plan: decode, eligibility,
// sizing and both renderings. It never panics, and either refuses the file with a
// *model.ConfigError that names the key (or says it is not a JSON object), or gives a plan
// whose every size is non-negative and short of saturation. The id is a registry
// checkpoint, so every backend is sized. CI runs it briefly:
//
//	go test ./internal/plan -run '^$' -fuzz '^FuzzPlanConfig$' -fuzztime 60s
func FuzzPlanConfig(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "snapshot", "data", "*", "config.json"))
	require.NoError(f, err)
	require.NotEmpty(f, seeds)
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{`null`, `{"num_hidden_layers":4611686018427387904}`, `{"vocab_size":10000000000000000}`} {
		f.Add([]byte(s))
	}
	cfg, err := config.Default()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &model.Source{ID: "Qwen/Qwen3-0.6B", Origin: "fuzz"}
		if err := model.Load(context.Background(), src, configOnly(data)); err != nil {
			var ce *model.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "Qwen/Qwen3-0.6B/config.json", ce.File)
			assert.True(t, ce.Key != "" || strings.HasPrefix(ce.Problem, "not a JSON object"), "no key named: %v", err)
			return
		}
		p := plan.Build(cfg, src, "")
		checkSizes(t, p)
		require.NoError(t, p.WriteText(io.Discard))
		_, err := json.Marshal(p)
		require.NoError(t, err)
	})
}

// checkSizes asserts that every size of p is a real size: not negative (wrapped), not
// saturated.
func checkSizes(t *testing.T, p *plan.Plan) {
	t.Helper()
	sane := func(what string, v int64) {
		t.Helper()
		assert.GreaterOrEqual(t, v, int64(0), what)
		assert.Less(t, v, int64(sizing.MaxBytes), what)
	}
	if p.Params != nil {
		sane("parameters", p.Params.Total)
		assert.LessOrEqual(t, p.Params.Total, int64(model.MaxParams))
	}
	for _, b := range p.Backends {
		for _, r := range b.Rows {
			at := fmt.Sprintf("%s at %s: ", b.Backend, r.Label)
			sane(at+"KV per token", r.KVBytesPerToken)
			sane(at+"KV cache", r.KVCacheBytes)
			sane(at+".pte", r.PTEBytes)
			sane(at+"embedding", r.EmbeddingBytes)
			sane(at+"resident", r.ResidentBytes)
			sane(at+"host need", r.HostNeedBytes)
			sane(at+"export peak", r.ExportPeakBytes)
			sane(at+"disk need", r.DiskNeedBytes)
			for _, c := range r.Chunks {
				sane(at+"chunk", c)
			}
		}
	}
}

// FuzzPlanArch reaches what byte mutations of config.json rarely do: configs whose every
// number is a whole number of any magnitude, in or out of bounds, for each family. In
// bounds the plan's sizes must all be real (the products of bounded numbers cannot wrap);
// out of bounds the refusal must name the key. The numbers come from archNumbers, so a
// flipped byte moves one by a power of two (Go's integer mutation only steps by ±100).
//
//	go test ./internal/plan -run '^$' -fuzz '^FuzzPlanArch$' -fuzztime 60s
func FuzzPlanArch(f *testing.F) {
	// Qwen3-1.7B, LFM2.5-1.2B, SmolLM2-135M, then every number at its bound.
	f.Add(encodeArch(0, 28, 2048, 16, 8, 128, 151936, 6144))
	f.Add(encodeArch(1, 16, 2048, 32, 8, 64, 65536, 12288))
	f.Add(encodeArch(2, 30, 576, 9, 3, 64, 49152, 1536))
	f.Add(encodeArch(0, 1024, 65536, 1024, 1024, 1024, 1<<22, 1<<20))
	cfg, err := config.Default()
	require.NoError(f, err)
	families := []struct{ id, arch, modelType, extra string }{
		{"Qwen/Qwen3-1.7B", "Qwen3ForCausalLM", "qwen3", `"rope_theta":1000000,"rms_norm_eps":1e-6`},
		{"LiquidAI/LFM2.5-1.2B-Instruct", "Lfm2ForCausalLM", "lfm2", `"rope_theta":1000000,"norm_eps":1e-5,"block_auto_adjust_ff_dim":true,"block_ffn_dim_multiplier":1.0,"block_multiple_of":256,"full_attn_idxs":[0]`},
		{"HuggingFaceTB/SmolLM2-135M-Instruct", "LlamaForCausalLM", "llama", `"rope_theta":100000,"rms_norm_eps":1e-5`},
	}
	f.Fuzz(func(t *testing.T, enc []byte) {
		which, n := decodeArch(enc)
		fam := families[which%len(families)]
		data := fmt.Sprintf(`{"architectures":[%q],"model_type":%q,"num_hidden_layers":%d,"hidden_size":%d,`+
			`"num_attention_heads":%d,"num_key_value_heads":%d,"head_dim":%d,"vocab_size":%d,"intermediate_size":%d,%s}`,
			fam.arch, fam.modelType, n[0], n[1], n[2], n[3], n[4], n[5], n[6], fam.extra)
		src := &model.Source{ID: fam.id, Origin: "fuzz"}
		if err := model.Load(context.Background(), src, configOnly(data)); err != nil {
			var ce *model.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.NotEmpty(t, ce.Key, "no key named: %v", err)
			return
		}
		p := plan.Build(cfg, src, "")
		require.NotNil(t, p.Arch, "a config with every number sizes: %s", p.ArchError)
		checkSizes(t, p)
		for _, b := range p.Backends {
			if b.OK {
				assert.NotEmpty(t, b.Rows, b.Backend)
			}
		}
		require.NoError(t, p.WriteText(io.Discard))
	})
}

// The seven architecture numbers (layers, hidden, heads, KV heads, head_dim, vocab, FFN)
// are 3 bytes each after a family byte: a sign-and-shift byte (bit 7 negates, the low six
// bits shift) and a 16-bit mantissa.
const archNumbers = 7

func encodeArch(family byte, nums ...int64) []byte {
	out := []byte{family}
	for _, v := range nums {
		shift := 0
		for v>>shift >= 1<<16 || (v>>shift)<<shift != v {
			shift++
		}
		m := v >> shift
		out = append(out, byte(shift), byte(m>>8), byte(m))
	}
	return out
}

func decodeArch(b []byte) (family int, nums [archNumbers]int64) {
	b = append(b, make([]byte, 1+3*archNumbers)...) // short inputs read as zeros
	family = int(b[0])
	for i := range nums {
		s, hi, lo := b[1+3*i], b[2+3*i], b[3+3*i]
		v := (int64(hi)<<8 | int64(lo)) << (s & 63)
		if s&0x80 != 0 {
			v = -v
		}
		nums[i] = v
	}
	return family, nums
}
