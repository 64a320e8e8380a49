package appview

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/pinned"
)

// Registered are the delegates the app's stock runtime (the pinned release) registers: the
// app refuses, before its runner can abort the process, a .pte whose methods name any
// other (ExecuTorchRuntime.getRegisteredBackends; docs/research/app-rules.md rule 11).
var Registered = []string{"XnnpackBackend", "VulkanBackend"}

// seqLenMethod is the constant method both of the app's runners read first; a .pte
// without it is refused before loading (a MediaTek chunk has none).
const seqLenMethod = "get_max_seq_len"

// Program is what the app's pre-load probe reads of a .pte: its method names and the
// delegate ids its methods call. A nil slice is unknown (a Hub repo's config.json lists
// the constant methods, never the delegates), and the rule that needs it is not applied.
type Program struct {
	Methods   []string `json:"methods"`
	Delegates []string `json:"delegates"`
	// Unreadable, when set, is why the file is not an ExecuTorch program the app can open
	// (not one at all, or ending before its segments do).
	Unreadable string `json:"unreadable,omitempty"`
}

// Refusal is why the app refuses to open a file with these facts, "" when it opens it.
func (p Program) Refusal() string {
	if p.Unreadable != "" {
		return "the app's probe refuses it: " + p.Unreadable
	}
	var foreign []string
	for _, d := range p.Delegates {
		if !slices.Contains(Registered, d) && !slices.Contains(foreign, d) {
			foreign = append(foreign, d)
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return fmt.Sprintf("the app refuses to open it: it calls %s, which %s does not register (it registers %s)",
			strings.Join(foreign, ", "), pinned.Say("app.registered-delegates"), strings.Join(Registered, " and "))
	}
	if p.Methods != nil && !slices.Contains(p.Methods, seqLenMethod) {
		return "the app refuses to open it: it has no " + seqLenMethod + " method, which both of the app's runners read first"
	}
	return ""
}

// configPrograms are the facts a folder's config.json gives of its programs: the constant
// methods each single-program variant lists (the delegates stay unknown). A window cut into
// chunks lists none for its chunks, which is what they have.
func configPrograms(configJSON []byte) map[string]Program {
	var root struct {
		Variants []struct {
			File    string                     `json:"file"`
			Files   []string                   `json:"files"`
			Methods map[string]json.RawMessage `json:"methods"`
		} `json:"variants"`
	}
	if json.Unmarshal(configJSON, &root) != nil {
		return nil
	}
	out := map[string]Program{}
	for _, v := range root.Variants {
		if v.Methods == nil {
			continue
		}
		names := []string{}
		for k := range v.Methods {
			names = append(names, k)
		}
		sort.Strings(names)
		if v.File != "" {
			out[v.File] = Program{Methods: names}
		}
		for _, f := range v.Files {
			out[f] = Program{Methods: []string{}}
		}
	}
	return out
}
