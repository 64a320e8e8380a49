package drivers

import (
	"context"
	"fmt"
)

// SolveModelScript is the whole-model GPTQ solve (the solve job).
const SolveModelScript = "solve_model.py"

// SolveModel is solve_model.py's input: the eager model to build, the calibration rows
// (a JSON file of SolveRow), and which linears to solve in which order.
type SolveModel struct {
	Out  string `json:"out"`
	Rows string `json:"rows"`
	Grid
	Blocks []Block    `json:"blocks"`
	Model  EagerModel `json:"model"`
}

// SolveRow is one calibration row of the rows file: its token ids, and the first position
// whose activations enter the Hessians (the positions before it are run as context only).
type SolveRow struct {
	Tokens   []int `json:"tokens"`
	KeepFrom int   `json:"keep_from"`
}

// Block is one decoder layer (Module "layers.<i>") or, with Module empty, a part of the
// model outside the layers (the output head). Groups are solved in order; the linears of
// one group share their input and so one Hessian. Next names the block whose inputs are
// this block's outputs, so the solve runs one layer at a time.
type Block struct {
	Module string     `json:"module"`
	Groups [][]string `json:"groups"`
	Next   string     `json:"next,omitempty"`
}

// EagerModel is how the driver builds ExecuTorch's eager model (no KV cache, fp32).
type EagerModel struct {
	ModelClass   string `json:"model_class"`
	Params       string `json:"params"`
	Checkpoint   string `json:"checkpoint"`
	MaxSeqLength int    `json:"max_seq_length"`
	LFM2StateFix bool   `json:"lfm2_state_fix"`
}

// SolveModelResult is solve_model.py's output.
type SolveModelResult struct {
	Out       string        `json:"out"`
	Seconds   float64       `json:"seconds"`
	Rows      int           `json:"rows"`
	Positions int           `json:"positions"`
	Linears   []LinearStats `json:"linears"`
	Process   Process       `json:"-"`
}

// PlanBlocks lists ExecuTorch's linears in solve order: per layer q, k and v together,
// then o, then w1 and w3 together, then w2 (a short-convolution layer of LFM2 has B, C and
// x in place of q, k and v, and out_proj in place of o; a gated DeltaNet layer of Qwen3.5
// its four input projections, which read the same normed input, then out_proj); the output
// head last. layerTypes is nil when every layer attends.
func PlanBlocks(layers int, layerTypes []string) ([]Block, error) {
	if layerTypes != nil && len(layerTypes) != layers {
		return nil, fmt.Errorf("solve plan: %d layer types for %d layers", len(layerTypes), layers)
	}
	var out []Block
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("layers.%d.", i)
		mix := [][]string{{p + "attention.wq", p + "attention.wk", p + "attention.wv"}, {p + "attention.wo"}}
		if layerTypes != nil {
			switch layerTypes[i] {
			case "conv":
				mix = [][]string{{p + "conv.B_proj", p + "conv.C_proj", p + "conv.x_proj"}, {p + "conv.out_proj"}}
			case "linear_attention":
				a := p + "attention."
				mix = [][]string{{a + "in_proj_qkv", a + "in_proj_z", a + "in_proj_b", a + "in_proj_a"}, {a + "out_proj"}}
			}
		}
		b := Block{Module: fmt.Sprintf("layers.%d", i), Groups: append(mix,
			[]string{p + "feed_forward.w1", p + "feed_forward.w3"}, []string{p + "feed_forward.w2"})}
		if i+1 < layers {
			b.Next = fmt.Sprintf("layers.%d", i+1)
		}
		out = append(out, b)
	}
	return append(out, Block{Groups: [][]string{{"output"}}}), nil
}

// Validate catches a plan the driver would misread before python starts.
func (s SolveModel) Validate() error {
	if s.Out == "" || s.Rows == "" {
		return fmt.Errorf("solve plan: the codes file and the calibration rows are required")
	}
	if err := s.Grid.Validate(); err != nil {
		return err
	}
	if s.Model.ModelClass == "" || s.Model.Params == "" || s.Model.Checkpoint == "" || s.Model.MaxSeqLength <= 0 {
		return fmt.Errorf("solve plan: the eager model needs its class, params, checkpoint and sequence length")
	}
	seen := map[string]bool{}
	for _, b := range s.Blocks {
		for _, g := range b.Groups {
			if len(g) == 0 {
				return fmt.Errorf("solve plan: an empty group in block %q", b.Module)
			}
			for _, n := range g {
				if seen[n] {
					return fmt.Errorf("solve plan: linear %s listed twice", n)
				}
				seen[n] = true
			}
		}
	}
	if len(seen) == 0 {
		return fmt.Errorf("solve plan: no linears")
	}
	return nil
}

// SolveModel runs the whole-model solve; it needs a python with ExecuTorch installed.
func (r Runner) SolveModel(ctx context.Context, plan SolveModel) (SolveModelResult, error) {
	var res SolveModelResult
	if err := plan.Validate(); err != nil {
		return res, err
	}
	p, err := r.run(ctx, SolveModelScript, plan, &res)
	res.Process = p
	return res, err
}
