package drivers

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanBlocks(t *testing.T) {
	b, err := PlanBlocks(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 3 || b[0].Module != "layers.0" || b[0].Next != "layers.1" || b[1].Next != "" || b[2].Module != "" ||
		strings.Join(b[0].Groups[0], ",") != "layers.0.attention.wq,layers.0.attention.wk,layers.0.attention.wv" ||
		strings.Join(b[2].Groups[0], ",") != "output" {
		t.Errorf("blocks = %+v", b)
	}
	lfm, err := PlanBlocks(2, []string{"conv", "full_attention"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lfm[0].Groups[1], ",") != "layers.0.conv.out_proj" || strings.Join(lfm[1].Groups[1], ",") != "layers.1.attention.wo" {
		t.Errorf("LFM2 blocks = %+v", lfm)
	}
	q35, err := PlanBlocks(2, []string{"linear_attention", "full_attention"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(q35[0].Groups[0], ",") != "layers.0.attention.in_proj_qkv,layers.0.attention.in_proj_z,layers.0.attention.in_proj_b,layers.0.attention.in_proj_a" ||
		strings.Join(q35[0].Groups[1], ",") != "layers.0.attention.out_proj" || strings.Join(q35[1].Groups[0], ",") != "layers.1.attention.wq,layers.1.attention.wk,layers.1.attention.wv" {
		t.Errorf("Qwen3.5 blocks = %+v", q35)
	}
	if _, err := PlanBlocks(3, []string{"conv"}); err == nil {
		t.Error("layer types of the wrong length accepted")
	}
}

func TestSolveModelValidate(t *testing.T) {
	blocks, _ := PlanBlocks(1, nil)
	good := SolveModel{Out: "codes.pt", Rows: "rows.json", Grid: DefaultGrid(), Blocks: blocks,
		Model: EagerModel{ModelClass: "qwen3_1_7b", Params: "p.json", Checkpoint: "c.pth", MaxSeqLength: 2048}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := map[string]func(*SolveModel){
		"no rows":   func(s *SolveModel) { s.Rows = "" },
		"bad grid":  func(s *SolveModel) { s.Damp = 0 },
		"no model":  func(s *SolveModel) { s.Model.Checkpoint = "" },
		"duplicate": func(s *SolveModel) { s.Blocks = append(s.Blocks, Block{Groups: [][]string{{"output"}}}) },
		"empty":     func(s *SolveModel) { s.Blocks = []Block{{Groups: [][]string{{}}}} },
	}
	for name, edit := range tests {
		s := good
		s.Blocks = append([]Block(nil), good.Blocks...)
		edit(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSolveModelTorch runs the whole-model solve on a tiny ExecuTorch-shaped decoder with
// Go's block plan: codes in range, the layer-at-a-time solve identical to whole-model
// passes, and the coded model closer to fp32 than round-to-nearest on held-out rows.
func TestSolveModelTorch(t *testing.T) {
	py := torchPython(t)
	blocks, err := PlanBlocks(3, nil)
	if err != nil {
		t.Fatal(err)
	}
	arg, _ := json.Marshal(map[string]any{"grid": DefaultGrid(), "blocks": blocks})
	var r struct {
		GoBlocksMatch     bool    `json:"go_blocks_match"`
		Linears           int     `json:"blocked_linears"`
		CodesInRange      bool    `json:"codes_in_range"`
		ScalesPositive    bool    `json:"scales_positive"`
		BlockedEqualsFlat float64 `json:"blocked_equals_flat"`
		ErrorGPTQ         float64 `json:"error_gptq"`
		ErrorRTN          float64 `json:"error_rtn"`
		Missing           string  `json:"missing"`
	}
	pyJSON(t, py, &r, filepath.Join("testdata", "solve_model_check.py"), string(arg))
	if !r.GoBlocksMatch || r.Linears != 3*7+1 || !r.CodesInRange || !r.ScalesPositive {
		t.Errorf("solve: %+v", r)
	}
	if r.BlockedEqualsFlat != 1 {
		t.Errorf("layer-at-a-time codes differ from whole-model passes: %.4f equal", r.BlockedEqualsFlat)
	}
	if !(r.ErrorGPTQ < 0.8*r.ErrorRTN) {
		t.Errorf("GPTQ output error %.3g is not well below round-to-nearest %.3g", r.ErrorGPTQ, r.ErrorRTN)
	}
	if !strings.Contains(r.Missing, "no linear layers.0.attention.wz") {
		t.Errorf("missing linear: %q", r.Missing)
	}
}

// TestSolveModelRowsIndependent runs the solve on a tiny LFM2-shaped decoder (a
// short-convolution layer, then an attention layer; KV cache off as in the solve) with rows
// A, B, A: both A rows must reach the convolution's out_proj and the next layer with
// identical inputs, so no row depends on the row before. The same run with the per-row
// reset disabled must find them different, or the tiny model has no state to leak.
func TestSolveModelRowsIndependent(t *testing.T) {
	py := torchPython(t)
	blocks, err := PlanBlocks(2, []string{"conv", "full_attention"})
	require.NoError(t, err)
	arg, err := json.Marshal(map[string]any{"grid": DefaultGrid(), "blocks": blocks})
	require.NoError(t, err)
	type report struct {
		OutProjCalls    int  `json:"out_proj_calls"`
		OutProjSame     bool `json:"out_proj_same"`
		OutProjBDiffers bool `json:"out_proj_b_differs"`
		Layer1Calls     int  `json:"layer1_calls"`
		Layer1Same      bool `json:"layer1_same"`
		Layer1BDiffers  bool `json:"layer1_b_differs"`
	}
	var r struct{ Fixed, Unfixed report }
	pyJSON(t, py, &r, filepath.Join("testdata", "solve_state_check.py"), string(arg))
	for name, rep := range map[string]report{"fixed": r.Fixed, "unfixed": r.Unfixed} {
		require.GreaterOrEqual(t, rep.OutProjCalls, 3, "%s: out_proj calls", name)
		require.GreaterOrEqual(t, rep.Layer1Calls, 3, "%s: layer 1 calls", name)
		assert.True(t, rep.OutProjBDiffers && rep.Layer1BDiffers, "%s: rows A and B gave the same inputs, so the check compares nothing: %+v", name, rep)
	}
	assert.True(t, r.Fixed.OutProjSame, "row A after row B reaches out_proj with other inputs than row A first")
	assert.True(t, r.Fixed.Layer1Same, "row A after row B reaches layer 1 with other inputs than row A first")
	assert.False(t, r.Unfixed.OutProjSame, "without the reset the convolution state should leak into out_proj's inputs")
	assert.False(t, r.Unfixed.Layer1Same, "without the reset the convolution state should leak into layer 1")
}

// TestSolveModelKeepFrom: the positions before a row's keep_from are run as context but
// left out of the Hessian, which equals x^T x summed here over the kept positions alone;
// the rows file takes both row forms and refuses a row that would count nothing.
func TestSolveModelKeepFrom(t *testing.T) {
	py := torchPython(t)
	var r struct {
		KeptMatches  float64 `json:"kept_matches"`
		KeptScale    float64 `json:"kept_scale"`
		EveryDiffers float64 `json:"every_differs"`
		Read         [][]any `json:"read"`
		Refused      string  `json:"refused"`
	}
	pyJSON(t, py, &r, filepath.Join("testdata", "solve_keep_check.py"), t.TempDir())
	require.Positive(t, r.KeptScale)
	assert.Less(t, r.KeptMatches, 1e-9*r.KeptScale, "the Hessian over kept positions differs from x^T x summed by hand")
	assert.Greater(t, r.EveryDiffers, 1e-3*r.KeptScale, "keep_from changed nothing, so the check compares nothing")
	require.Len(t, r.Read, 2)
	assert.Equal(t, []any{[]any{1.0, 2.0, 3.0}, []any{4.0, 5.0, 6.0, 7.0}, []any{8.0, 9.0}}, r.Read[0])
	assert.Equal(t, []any{0.0, 2.0, 0.0}, r.Read[1])
	assert.Equal(t, "calibration row 0 keeps from position 2 of its 2", r.Refused)
}
