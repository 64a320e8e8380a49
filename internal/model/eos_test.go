package model

import (
	"context"
	"encoding/json"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenizerEOS: a chat turn ends with tokenizer_config.json's eos_token, which joins the
// config's EOS ids. Qwen3.5 (no generation_config.json, text_config eos 248044
// <|endoftext|>) ends turns with <|im_end|> 248046, the pair ExecuTorch's own Qwen3.5
// recipe writes; a name given as {"content": ...} resolves the same way, an unknown one to
// nothing, and a family whose config lists the token already gets it once.
func TestTokenizerEOS(t *testing.T) {
	added := `"added_tokens_decoder": {"248044": {"content": "<|endoftext|>"}, "248046": {"content": "<|im_end|>"}}`
	qwen35 := `{"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "text_config": {"eos_token_id": 248044}}`
	for _, tc := range []struct {
		name, config, tokenizer string
		want                    []int64
	}{
		{"string", qwen35, `{"eos_token": "<|im_end|>", ` + added + `}`, []int64{248044, 248046}},
		{"object", qwen35, `{"eos_token": {"content": "<|im_end|>"}, ` + added + `}`, []int64{248044, 248046}},
		{"already listed", qwen35, `{"eos_token": "<|endoftext|>", ` + added + `}`, []int64{248044}},
		{"not an added token", qwen35, `{"eos_token": "</s>", ` + added + `}`, []int64{248044}},
		{"no tokenizer_config", qwen35, "", []int64{248044}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig("config.json", []byte(tc.config))
			require.NoError(t, err)
			s := &Source{ID: "Qwen/Qwen3.5-0.8B", Config: cfg}
			files := mapFiles{}
			if tc.tokenizer != "" {
				files["tokenizer_config.json"] = []byte(tc.tokenizer)
			}
			require.NoError(t, loadTokenizerEOS(context.Background(), s, files))
			_, eos := s.SpecialTokens()
			assert.Equal(t, tc.want, eos)
		})
	}
	err := loadTokenizerEOS(context.Background(), &Source{ID: "x/y"}, mapFiles{"tokenizer_config.json": []byte("{")})
	assert.ErrorContains(t, err, "tokenizer_config.json of x/y is not valid")
	var e json.RawMessage
	assert.Nil(t, tokenID(e, nil))
}

// mapFiles is a repo of small files held in memory.
type mapFiles map[string][]byte

func (m mapFiles) ReadFile(_ context.Context, name string) ([]byte, error) {
	if b, ok := m[name]; ok {
		return b, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (m mapFiles) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	b, err := m.ReadFile(ctx, name)
	if err != nil {
		return nil, err
	}
	return b[min(off, int64(len(b))):min(off+length, int64(len(b)))], nil
}
