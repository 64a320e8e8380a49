package appview

import (
	"encoding/json"
)

// MaxConfigBytes is how much of a folder's config.json the app reads: a larger one gives
// its files no window at all (the app bounds the optional read to a mebibyte).
const MaxConfigBytes = 1 << 20

// Windows is what the app reads of one folder's config.json: for each variant that names a
// "file", the window, keyed by that name as written. It reads nothing else: a variant that
// lists its programs under "files" (a window cut into chunks) gives none of them a window,
// and the key must be a bare name, since the app joins it to the config's folder and
// matches the result against the .pte's path.
func Windows(configJSON []byte) map[string]int {
	if len(configJSON) > MaxConfigBytes {
		return nil
	}
	var root struct {
		Variants []json.RawMessage `json:"variants"`
	}
	if json.Unmarshal(configJSON, &root) != nil {
		return nil
	}
	out := map[string]int{}
	for _, raw := range root.Variants {
		var v struct {
			File    *string                    `json:"file"`
			Methods map[string]json.RawMessage `json:"methods"`
		}
		if json.Unmarshal(raw, &v) != nil || v.File == nil || v.Methods == nil {
			continue
		}
		if w := methodWindow(v.Methods); w > 0 {
			out[*v.File] = w
		}
	}
	return out
}

// methodWindow is the window a variant's methods state: get_max_context_len, else
// get_max_seq_len, else the token dimension of forward's first input (a static length
// plus one, or a dynamic one's max).
func methodWindow(m map[string]json.RawMessage) int {
	for _, k := range []string{"get_max_context_len", "get_max_seq_len"} {
		var n int
		if json.Unmarshal(m[k], &n) == nil && n > 0 {
			return n
		}
	}
	var fwd struct {
		Inputs []struct {
			Shape []json.RawMessage `json:"shape"`
		} `json:"inputs"`
	}
	if json.Unmarshal(m["forward"], &fwd) != nil || len(fwd.Inputs) == 0 || len(fwd.Inputs[0].Shape) < 2 {
		return 0
	}
	tok := fwd.Inputs[0].Shape[1]
	var n int
	if json.Unmarshal(tok, &n) == nil && n+1 > 0 {
		return n + 1
	}
	var dyn struct {
		Max int `json:"max"`
	}
	if json.Unmarshal(tok, &dyn) == nil && dyn.Max > 0 {
		return dyn.Max
	}
	return 0
}

// residents is exe-expo's own memory model as a published config.json records it: for
// each program file, what the phone holds for its window (device_resident_bytes), and the
// window exe-expo exported, whether the program is a variant's "file" or one of its chunk
// "files". The app reads none of this; appview sets it beside what the app does read.
func residents(configJSON []byte) map[string]variantFacts {
	var root struct {
		Variants []struct {
			File     string   `json:"file"`
			Files    []string `json:"files"`
			Context  int      `json:"context"`
			Resident int64    `json:"device_resident_bytes"`
		} `json:"variants"`
	}
	if json.Unmarshal(configJSON, &root) != nil {
		return nil
	}
	out := map[string]variantFacts{}
	for _, v := range root.Variants {
		f := variantFacts{Window: v.Context, Resident: v.Resident, Chunks: len(v.Files)}
		if v.File != "" {
			out[v.File] = f
		}
		for _, name := range v.Files {
			out[name] = f
		}
	}
	return out
}

// variantFacts are exe-expo's facts about one program of a published variant.
type variantFacts struct {
	Window   int
	Resident int64
	// Chunks is how many programs the window is cut into (0: one program).
	Chunks int
}

// Intents reads what exe-expo built each .pte as from the config.json files it published
// (folder → bytes): the folder's backend, turned into the name the app must read by
// appName (nil: keep it), and each variant's window. A published repo carries no export
// report the app reads, so these are the facts appview holds a Hub repo to; a config.json
// that is not exe-expo's (no "backend") gives none.
func Intents(configs map[string][]byte, appName func(backend string) string) map[string]Intent {
	out := map[string]Intent{}
	for folder, b := range configs {
		var c struct {
			Backend  string `json:"backend"`
			Variants []struct {
				File    string   `json:"file"`
				Files   []string `json:"files"`
				Context int      `json:"context"`
			} `json:"variants"`
		}
		if json.Unmarshal(b, &c) != nil || c.Backend == "" {
			continue
		}
		name := c.Backend
		if appName != nil {
			name = appName(c.Backend)
		}
		for _, v := range c.Variants {
			if v.File != "" {
				out[joinFolder(folder, v.File)] = Intent{Backend: name, Window: v.Context}
			}
			for _, f := range v.Files {
				out[joinFolder(folder, f)] = Intent{Backend: name, Window: v.Context, Chunked: true}
			}
		}
	}
	return out
}
