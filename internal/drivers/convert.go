package drivers

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Convert is convert.py's input: one rule for every tensor in the shards, so the driver
// never has to know a family. Encoded as JSON with sorted keys, the same facts always
// give the same bytes.
type Convert struct {
	// Shards are the safetensors files, read in this order.
	Shards []string `json:"shards"`
	// Output is the checkpoint torch.save writes; see CheckCheckpointPath.
	Output string `json:"output"`
	// Tensors maps every Hugging Face tensor name to what becomes of it.
	Tensors map[string]Rule `json:"tensors"`
	// Tie copies the embedding to the output head when the checkpoint has no lm_head.
	Tie *Tie `json:"tie"`
	// ExpectTensors is how many tensors the checkpoint must hold, tied output included.
	ExpectTensors int `json:"expect_tensors"`
}

// Rule is what convert.py does with one source tensor: exactly one of To, Split or Ignore.
type Rule struct {
	// To is the ExecuTorch name.
	To string `json:"to,omitempty"`
	// Unpermute, when set, is the head count for undoing HF's rotate_half row order, so a
	// model run with ExecuTorch's interleaved RoPE sees the same rotation.
	Unpermute int `json:"unpermute,omitempty"`
	// Split cuts the tensor along dim 0 into len(Split) parts, named in order: equal parts,
	// or Rows rows each when set.
	Split []string `json:"split,omitempty"`
	// Rows are the rows of each Split part, when the parts differ in size (Phi's fused
	// qkv_proj); convert.py refuses a tensor whose rows they do not add up to.
	Rows []int `json:"rows,omitempty"`
	// Ignore drops a buffer that carries no weights (rotary inv_freq, attention masks).
	Ignore bool `json:"ignore,omitempty"`
}

// Tie names the tensor copied and the name it is copied to.
type Tie struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ConvertResult is convert.py's output, carried into the export report.
type ConvertResult struct {
	Tensors        int            `json:"tensors"`
	TiedEmbeddings bool           `json:"tied_embeddings"`
	Dtypes         map[string]int `json:"dtypes"`
	// Process is measured by the Runner, not printed by the driver.
	Process Process `json:"-"`
}

// Arch is what the conversion plan needs to know about a model: its family, its shape and
// the tensor names its safetensors headers list.
type Arch struct {
	// Family is the exe-expo family key: qwen3, qwen2_5, llama, lfm2, phi4mini or qwen3_5.
	Family  string
	Layers  int
	Heads   int
	KVHeads int
	// HeadDim sizes the parts of a fused attention projection (Phi's qkv_proj); the other
	// families' plans do not read it.
	HeadDim int
	// TiedEmbeddings is config.json's tie_word_embeddings (the caller applies its default
	// of true). It matters only when the checkpoint has no lm_head.weight.
	TiedEmbeddings bool
	// Tensors are the names across all shards.
	Tensors []string
}

// Checkpoint names that matter to ExecuTorch's loader.
const (
	embedTarget  = "tok_embeddings.weight"
	outputTarget = "output.weight"
	layerPrefix  = "model.layers."
)

// ignoredSuffixes are buffers some checkpoints carry that hold no weights.
var ignoredSuffixes = []string{"rotary_emb.inv_freq", ".masked_bias", ".attn.bias"}

// PlanConvert builds the conversion plan for a model whose weights are in shards and whose
// checkpoint goes to output. Any tensor the family does not know is an error naming it, so
// an architecture change upstream fails here rather than deep inside an export.
func PlanConvert(a Arch, shards []string, output string) (Convert, error) {
	fam, ok := families[a.Family]
	if !ok {
		return Convert{}, fmt.Errorf("conversion plan: family %q has no converter (want qwen3, qwen2_5, llama, lfm2, phi4mini or qwen3_5)", a.Family)
	}
	if err := a.validate(); err != nil {
		return Convert{}, err
	}
	if err := CheckCheckpointPath(output); err != nil {
		return Convert{}, err
	}
	if len(shards) == 0 {
		return Convert{}, fmt.Errorf("conversion plan: no safetensors shards")
	}
	c := Convert{Shards: shards, Output: output, Tensors: map[string]Rule{}}
	perLayer := map[int]int{}
	for _, name := range a.Tensors {
		rule, layer, err := fam.rule(a, name)
		if err != nil {
			return Convert{}, err
		}
		if _, dup := c.Tensors[name]; dup {
			return Convert{}, fmt.Errorf("conversion plan: tensor %s listed twice", name)
		}
		c.Tensors[name] = rule
		if layer >= 0 && !rule.Ignore {
			perLayer[layer]++
		}
		c.ExpectTensors += rule.outputs()
	}
	if err := fam.checkLayers(a, perLayer); err != nil {
		return Convert{}, err
	}
	if err := c.planHead(a); err != nil {
		return Convert{}, err
	}
	return c, nil
}

func (a Arch) validate() error {
	if a.Layers <= 0 || a.Heads <= 0 || a.KVHeads <= 0 {
		return fmt.Errorf("conversion plan for %s: layers %d, heads %d, kv heads %d must all be positive",
			a.Family, a.Layers, a.Heads, a.KVHeads)
	}
	if a.Heads%a.KVHeads != 0 {
		return fmt.Errorf("conversion plan for %s: %d heads do not divide into %d kv heads", a.Family, a.Heads, a.KVHeads)
	}
	return nil
}

// planHead checks the embedding and final norm are there and ties the output head when
// the checkpoint has none.
func (c *Convert) planHead(a Arch) error {
	targets := map[string]bool{}
	for _, r := range c.Tensors {
		targets[r.To] = true
	}
	for _, want := range []string{embedTarget, "norm.weight"} {
		if !targets[want] {
			return fmt.Errorf("conversion plan for %s: no tensor becomes %s", a.Family, want)
		}
	}
	if targets[outputTarget] {
		return nil
	}
	if !a.TiedEmbeddings {
		return fmt.Errorf("conversion plan for %s: no lm_head.weight and tie_word_embeddings is false", a.Family)
	}
	c.Tie = &Tie{From: embedTarget, To: outputTarget}
	c.ExpectTensors++
	return nil
}

func (r Rule) outputs() int {
	switch {
	case r.Ignore:
		return 0
	case len(r.Split) > 0:
		return len(r.Split)
	default:
		return 1
	}
}

// CheckCheckpointPath refuses a checkpoint path that ExecuTorch's Llama2Model would take
// for a pre-quantized checkpoint: it tests the whole path string for "int8" and "8da4w",
// so a work folder named after the quantisation mode is enough to trigger it.
func CheckCheckpointPath(path string) error {
	for _, bad := range []string{"int8", "8da4w"} {
		if strings.Contains(path, bad) {
			return fmt.Errorf("checkpoint path %s contains %q, which makes ExecuTorch load it as pre-quantized", path, bad)
		}
	}
	return nil
}

// splitLayer reads "model.layers.<i>.<suffix>"; ok is false for other names.
func splitLayer(name string) (layer int, suffix string, ok bool, err error) {
	rest, found := strings.CutPrefix(name, layerPrefix)
	if !found {
		return -1, "", false, nil
	}
	idx, suffix, found := strings.Cut(rest, ".")
	if !found {
		return -1, "", false, fmt.Errorf("conversion plan: tensor %s has no name after its layer index", name)
	}
	layer, err = strconv.Atoi(idx)
	if err != nil || layer < 0 {
		return -1, "", false, fmt.Errorf("conversion plan: tensor %s has layer index %q", name, idx)
	}
	return layer, suffix, true, nil
}

func sortedLayers(perLayer map[int]int) []int {
	var ls []int
	for l := range perLayer {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	return ls
}
