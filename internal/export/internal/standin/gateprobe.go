package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// gateProbe answers drivers/gate_probe.py's fidelity part, as the export's simulated
// measure asks it (no gate rows): the reference reads the plan's first tokens (ids 1, 2,
// ...) and gives every position the same distribution, half its mass on the top_k ids 0,
// 1, ... and half on the rest; the measure gives the QDQ program's the same, except that
// every fourth position's argmax is another token, so agreement is 75% and KL 0.
func gateProbe() error {
	var plan struct {
		Mode     string `json:"mode"`
		Fidelity struct {
			Tokens   int     `json:"tokens"`
			TopK     int     `json:"top_k"`
			TokenIDs []int   `json:"token_ids"`
			Buckets  [][]int `json:"buckets"`
		} `json:"fidelity"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&plan); err != nil {
		return err
	}
	f := plan.Fidelity
	type pos struct {
		IDs   []int     `json:"ids,omitempty"`
		Token *int      `json:"token,omitempty"`
		LogP  []float64 `json:"logp"`
		Rest  float64   `json:"rest"`
	}
	logp := func(k int) []float64 {
		l := make([]float64, k)
		for i := range l {
			l[i] = math.Log(0.5 / float64(k))
		}
		return l
	}
	var out map[string]any
	switch plan.Mode {
	case "reference":
		tokens, positions := make([]int, f.Tokens), make([]pos, f.Tokens)
		for i := range tokens {
			tokens[i] = i + 1
			positions[i] = pos{IDs: make([]int, f.TopK), LogP: logp(f.TopK), Rest: 0.5}
			for j := range positions[i].IDs {
				positions[i].IDs[j] = j
			}
		}
		out = map[string]any{"rows": map[string]any{}, "fidelity": map[string]any{"top_k": f.TopK, "tokens": tokens, "positions": positions}}
	case "measure":
		positions := make([]pos, len(f.TokenIDs))
		for i := range positions {
			tok := f.Buckets[i][0]
			if i%4 == 3 {
				tok = 1000
			}
			positions[i] = pos{Token: &tok, LogP: logp(len(f.Buckets[i])), Rest: 0.5}
		}
		out = map[string]any{"rows": map[string]any{}, "fidelity": map[string]any{"positions": positions}}
	default:
		return fmt.Errorf("standin: gate_probe.py mode %q", plan.Mode)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
