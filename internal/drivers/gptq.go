package drivers

import (
	"fmt"
	"math"
)

// GPTQ is gptq.py's input: the grid and solver settings of the reference implementation's
// solve (docs/research/drivers.md#gptq-grid-and-solver-settings) and the linears to solve.
// Build it with NewGPTQ so the settings match what export_with_codes expects (int4 codes in
// −8..7, groups of 32, bf16 scales).
type GPTQ struct {
	// Out is the codes.pt written: {name: {"qdata": int8 [out,in], "scale": bf16 [out,in/group]}}.
	Out string `json:"out"`
	Grid
	Linears []Linear `json:"linears"`
}

// Grid is the int4 grid and the solver's settings, shared by the per-linear and the
// whole-model solve.
type Grid struct {
	// Damp is the fraction of the mean Hessian diagonal added to it before inversion.
	Damp      float64 `json:"damp"`
	GroupSize int     `json:"group_size"`
	BlockSize int     `json:"block_size"`
	// Clips are the fractions of a group's absolute maximum tried for its scale.
	Clips     []float64 `json:"clips"`
	HalfRange float64   `json:"half_range"`
	QMin      int       `json:"qmin"`
	QMax      int       `json:"qmax"`
	// FakeQuantActivations quantises activations per token (asymmetric int8) before they
	// enter the Hessian, as 8da4w's dynamic activation quantisation will at run time. It
	// applies to Linear.Activations only; a given Hessian is used as it is.
	FakeQuantActivations bool `json:"fake_quant_activations"`
}

// Linear is one layer to solve. Weight is a torch.save file of the [out, in] weight (or of
// a dict, then WeightKey picks it); exactly one of Hessian ([in, in]) and Activations
// ([..., in], or a list of such tensors) is set.
type Linear struct {
	Name        string `json:"name"`
	Weight      string `json:"weight"`
	WeightKey   string `json:"weight_key,omitempty"`
	Hessian     string `json:"hessian,omitempty"`
	Activations string `json:"activations,omitempty"`
}

// GPTQResult is gptq.py's output.
type GPTQResult struct {
	Out     string        `json:"out"`
	Seconds float64       `json:"seconds"`
	Linears []LinearStats `json:"linears"`
	// Process is measured by the Runner, not printed by the driver.
	Process Process `json:"-"`
}

// LinearStats says how much GPTQ gained on one linear: output error
// trace(ΔW H ΔW^T) of the solved codes and of round-to-nearest on the same grid, absolute
// and relative to trace(W H W^T).
type LinearStats struct {
	Name        string  `json:"name"`
	Rows        int     `json:"rows"`
	Cols        int     `json:"cols"`
	DeadColumns int     `json:"dead_columns"`
	Damp        float64 `json:"damp"`
	// HessianReused is true when the previous linear had the same Hessian or activations
	// file, so its factorisation was reused: list linears that share inputs together.
	HessianReused bool    `json:"hessian_reused"`
	ErrorGPTQ     float64 `json:"error_gptq"`
	ErrorRTN      float64 `json:"error_rtn"`
	RelativeGPTQ  float64 `json:"relative_gptq"`
	RelativeRTN   float64 `json:"relative_rtn"`
	Seconds       float64 `json:"seconds"`
}

// The reference solve's grid and solver settings
// (docs/research/drivers.md#gptq-grid-and-solver-settings).
const (
	DefaultDamp      = 0.01
	DefaultGroupSize = 32
	DefaultBlockSize = 128
	int4HalfRange    = 7.5
)

// DefaultClips are 1.0, 0.95, …, 0.6.
func DefaultClips() []float64 {
	var cs []float64
	for i := 0; i <= 8; i++ {
		cs = append(cs, math.Round((1.0-0.05*float64(i))*100)/100)
	}
	return cs
}

// NewGPTQ returns the reference solve's plan for linears, writing codes to out.
func NewGPTQ(out string, linears []Linear) GPTQ {
	return GPTQ{Out: out, Grid: DefaultGrid(), Linears: linears}
}

// DefaultGrid is the reference solve's grid: damp 0.01, groups of 32, blocks of 128, clips
// 1.0 to 0.6, symmetric int4 codes, activations fake-quantised per token.
func DefaultGrid() Grid {
	return Grid{
		Damp: DefaultDamp, GroupSize: DefaultGroupSize, BlockSize: DefaultBlockSize,
		Clips: DefaultClips(), HalfRange: int4HalfRange, QMin: -8, QMax: 7, FakeQuantActivations: true,
	}
}

// Validate catches a plan the solver would misread before python starts.
func (g GPTQ) Validate() error {
	if g.Out == "" {
		return fmt.Errorf("gptq plan: no output path")
	}
	if err := g.Grid.Validate(); err != nil {
		return err
	}
	if len(g.Linears) == 0 {
		return fmt.Errorf("gptq plan: no linears")
	}
	seen := map[string]bool{}
	for _, l := range g.Linears {
		if err := l.validate(); err != nil {
			return err
		}
		if seen[l.Name] {
			return fmt.Errorf("gptq plan: linear %s listed twice", l.Name)
		}
		seen[l.Name] = true
	}
	return nil
}

// Validate checks the grid's settings.
func (g Grid) Validate() error {
	switch {
	case g.Damp <= 0:
		return fmt.Errorf("gptq plan: damp %g must be positive", g.Damp)
	case g.GroupSize <= 0 || g.BlockSize <= 0 || g.BlockSize%g.GroupSize != 0:
		return fmt.Errorf("gptq plan: block size %d must be a positive multiple of group size %d", g.BlockSize, g.GroupSize)
	case len(g.Clips) == 0:
		return fmt.Errorf("gptq plan: no clips")
	case g.HalfRange <= 0 || g.QMin >= 0 || g.QMax <= 0:
		return fmt.Errorf("gptq plan: grid half range %g, codes %d..%d", g.HalfRange, g.QMin, g.QMax)
	}
	for _, c := range g.Clips {
		if c <= 0 || c > 1 {
			return fmt.Errorf("gptq plan: clip %g outside (0, 1]", c)
		}
	}
	return nil
}

func (l Linear) validate() error {
	if l.Name == "" || l.Weight == "" {
		return fmt.Errorf("gptq plan: linear %q needs a name and a weight file", l.Name)
	}
	if (l.Hessian == "") == (l.Activations == "") {
		return fmt.Errorf("gptq plan: linear %s needs exactly one of a Hessian and activations", l.Name)
	}
	return nil
}
