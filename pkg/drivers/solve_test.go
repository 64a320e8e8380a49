package drivers

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
