package speed

import (
	"fmt"

	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// Structure is what a file says of how it prefills, read from the .pte without running it.
type Structure struct {
	// DynamicShape is the file's enable_dynamic_shape; nil when it has none. ExecuTorch's
	// text runner prefills a chunk a call only when it is true (TextPrefiller's parallel
	// prefill); without it, one token a call.
	DynamicShape *bool `json:"enable_dynamic_shape"`
	// TokenDim is forward's token dimension as the program plans it (the first input's
	// last size), and TokenDimStatic whether the program fixes it; 0 when forward's first
	// input is not a tensor.
	TokenDim       int32 `json:"token_dim,omitempty"`
	TokenDimStatic bool  `json:"token_dim_static,omitempty"`
	// OneTokenPerCall is the structural finding, Why its evidence.
	OneTokenPerCall bool   `json:"one_token_per_call"`
	Why             string `json:"why,omitempty"`
	// Unread is why the file could not be read, when it could not (the structural check
	// reports the file itself); the measured rule still applies.
	Unread string `json:"unread,omitempty"`
}

// dynamismStatic is TensorShapeDynamism.STATIC in ExecuTorch's program schema.
const dynamismStatic = 0

// Read is the structure of the program p: a file whose forward takes a static token
// dimension of 1, or that says enable_dynamic_shape false while it keeps a KV cache, is
// prefilled one token a call.
func Read(p *pte.Program) Structure {
	var st Structure
	md := p.Metadata()
	if v, ok := md.Bool("enable_dynamic_shape"); ok {
		st.DynamicShape = &v
	}
	if fwd := p.Method("forward"); fwd != nil && len(fwd.Inputs) > 0 {
		if i := fwd.Inputs[0]; i >= 0 && int(i) < len(fwd.Values) {
			if t := fwd.Values[i].Tensor; fwd.Values[i].Kind == pte.KindTensor && t != nil && len(t.Sizes) > 0 {
				st.TokenDim, st.TokenDimStatic = t.Sizes[len(t.Sizes)-1], t.Dynamism == dynamismStatic
			}
		}
	}
	kv, _ := md.Bool("use_kv_cache")
	switch {
	case st.TokenDim == 1 && st.TokenDimStatic:
		st.OneTokenPerCall, st.Why = true, "forward's token input is fixed at 1"
	case st.DynamicShape != nil && !*st.DynamicShape && kv:
		st.OneTokenPerCall, st.Why = true, "enable_dynamic_shape is false, so the runner feeds the prompt one token a call"
	}
	return st
}

// ReadFile is Read of the .pte at path; a file that does not read says why in Unread.
func ReadFile(path string) Structure {
	p, err := pte.OpenFile(path)
	if err != nil {
		return Structure{Unread: fmt.Sprintf("%s does not read as a program: %s", path, err)}
	}
	return Read(p)
}
