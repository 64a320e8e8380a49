// Package catalog is the output org's index of everything published: one JSON file in a
// Hub repo of the org, listing every model, backend folder (chip) and window with its files
// (path, sha256, size), the runtime the files need (ExecuTorch, QAIRT, NeuroPilot SDK), the
// memory they need, the phones that hold them, their quality figures and the source
// revision. The app reads one file instead of searching the Hub. Publish keeps it current
// in the same commit-on-head way as a model repo; `exe-expo catalog` prints, checks and
// rebuilds it (docs/research/catalog.md).
package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/experimentalmachines/exe-expo/internal/result"
	"github.com/experimentalmachines/exe-expo/internal/runtimecompat"
)

// SchemaVersion is the catalog's version; a reader refuses another.
const SchemaVersion = 1

// File is where the catalog lives in its repo.
const File = "catalog.json"

// Catalog is the whole index.
type Catalog struct {
	SchemaVersion int    `json:"schema_version"`
	Org           string `json:"org"`
	// Models are keyed by output repo ("experimentalmachines/Qwen3-0.6B-ExecuTorch").
	Models map[string]*Model `json:"models"`
}

// Model is one output repo.
type Model struct {
	Source string `json:"source_model"`
	// Folders are keyed by folder in the repo ("xnnpack", "qnn/sm8750").
	Folders map[string]*Folder `json:"folders"`
}

// Folder is one backend (and chip) folder: the runtime its files need and its windows.
type Folder struct {
	Backend string  `json:"backend"`
	Target  *string `json:"target"`
	Runtime Runtime `json:"runtime"`
	// LoadsOn is the ExecuTorch runtimes that load the folder's files without a warning
	// (internal/runtimecompat), derived from Runtime.ExecuTorch; empty when that is no
	// release number.
	LoadsOn runtimecompat.Range `json:"loads_on,omitzero"`
	// Revision is the model repo's commit the entry was read at: the files are there.
	Revision string `json:"revision"`
	// Older are the folder's entries for other runtimes, kept when files for a new runtime
	// replaced them, newest first, one per runtime: an app on an older runtime downloads
	// its files at their Revision.
	Older []*Folder `json:"older,omitempty"`
	// Phones is the folder's phone table, as its config.json gives it, and PhonesByCache
	// the same with one KV cache at every window (config.json's phones_by_kv_cache).
	Phones        json.RawMessage `json:"phones,omitempty"`
	PhonesByCache json.RawMessage `json:"phones_by_kv_cache,omitempty"`
	Windows       []Window        `json:"windows"`
}

// Runtime is what a phone needs to run the folder's files.
type Runtime struct {
	ExecuTorch    string `json:"executorch"`
	QAIRT         string `json:"qairt,omitempty"`
	NeuroPilotSDK string `json:"neuropilot_sdk,omitempty"`
}

// Window is one window's files and figures.
type Window struct {
	Context        int         `json:"context"`
	Quantization   string      `json:"quantization"`
	SourceRevision string      `json:"source_revision"`
	Files          []FileEntry `json:"files"`
	ResidentBytes  int64       `json:"device_resident_bytes,omitempty"`
	FitsPhonesGiB  []int       `json:"fits_phones_gib,omitempty"`
	// KVCache is how the window's file keeps its KV cache ("fp32", "int8"), as config.json
	// says; empty for the NPU backends and files from before it was recorded.
	KVCache string          `json:"kv_cache,omitempty"`
	Quality json.RawMessage `json:"quality,omitempty"`
}

// FileEntry is one file of a window, as the repo holds it.
type FileEntry struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	SizeBytes int64  `json:"size_bytes,omitempty"`
}

// New is an empty catalog of org.
func New(org string) *Catalog {
	return &Catalog{SchemaVersion: SchemaVersion, Org: org, Models: map[string]*Model{}}
}

// Decode reads a catalog, refusing another schema version.
func Decode(name string, b []byte) (*Catalog, error) {
	var v struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s is not an exe-expo catalog (JSON): %w", name, err)
	}
	if err := result.CheckVersion(name, "catalog", v.SchemaVersion, SchemaVersion); err != nil {
		return nil, err
	}
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not an exe-expo catalog: %w", name, err)
	}
	if c.Models == nil {
		c.Models = map[string]*Model{}
	}
	for _, m := range c.Models {
		for _, f := range m.Folders {
			f.deriveLoadsOn()
		}
	}
	return &c, nil
}

// Encode is the catalog as it is committed: indented, keys sorted, one newline at the end,
// so the same catalog is always the same bytes and a republish commits nothing.
func (c *Catalog) Encode() ([]byte, error) {
	c.SchemaVersion = SchemaVersion
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the catalog: %w", err)
	}
	return append(b, '\n'), nil
}

// SetModel replaces repo's entry with the folders its config.json files describe at
// revision (folder path → file bytes); a repo without any is removed. A folder whose
// runtime changed keeps its former entry under Older, so the files for the old runtime stay
// listed, at the commit that holds them.
func (c *Catalog) SetModel(repo, revision string, configs map[string][]byte) error {
	m := &Model{Folders: map[string]*Folder{}}
	for folder, data := range configs {
		f, source, err := folderFrom(folder, data)
		if err != nil {
			return fmt.Errorf("%s/%s/config.json: %w", repo, folder, err)
		}
		f.Revision = revision
		if old, ok := c.Models[repo]; ok && old.Folders[folder] != nil {
			f.Older = keepOlder(old.Folders[folder], f.Runtime)
		}
		m.Source = source
		m.Folders[folder] = f
	}
	if len(m.Folders) == 0 {
		delete(c.Models, repo)
		return nil
	}
	c.Models[repo] = m
	return nil
}

// keepOlder is the older entries a folder keeps when its entry is replaced by one for
// runtime: the replaced entry if it was for another runtime, then its own older ones, one
// per runtime and none for runtime itself.
func keepOlder(old *Folder, runtime Runtime) []*Folder {
	var out []*Folder
	seen := map[Runtime]bool{runtime: true}
	prev := *old
	prev.Older = nil
	for _, f := range append([]*Folder{&prev}, old.Older...) {
		if !seen[f.Runtime] {
			seen[f.Runtime] = true
			out = append(out, f)
		}
	}
	return out
}

// deriveLoadsOn sets LoadsOn from the runtime, for the folder and the older entries it keeps
// (a catalog written before the field existed reads the same as one written after).
func (f *Folder) deriveLoadsOn() {
	f.LoadsOn, _ = runtimecompat.LoadsOn(f.Runtime.ExecuTorch)
	for _, o := range f.Older {
		o.deriveLoadsOn()
	}
}

// String names the runtime as the summaries print it.
func (r Runtime) String() string {
	s := "ExecuTorch " + r.ExecuTorch
	if r.QAIRT != "" {
		s += ", QAIRT " + r.QAIRT
	}
	if r.NeuroPilotSDK != "" {
		s += ", NeuroPilot SDK " + r.NeuroPilotSDK
	}
	return s
}

// folderConfig is what the catalog reads of a folder's config.json (internal/publish writes it).
type folderConfig struct {
	RuntimeVersion string  `json:"runtime_version"`
	Backend        string  `json:"backend"`
	Target         *string `json:"target"`
	SourceModel    string  `json:"source_model"`
	QNNSDKVersion  string  `json:"qnn_sdk_version"`
	NeuroPilotSDK  *struct {
		Build string `json:"build"`
	} `json:"neuropilot_sdk"`
	Phones        json.RawMessage `json:"phones"`
	PhonesByCache json.RawMessage `json:"phones_by_kv_cache"`
	Variants      []struct {
		File           string          `json:"file"`
		Files          []string        `json:"files"`
		Embedding      string          `json:"embedding"`
		SizeBytes      int64           `json:"size_bytes"`
		SHA256         json.RawMessage `json:"sha256"`
		Context        int             `json:"context"`
		SourceRevision string          `json:"source_revision"`
		Quantization   string          `json:"quantization"`
		ResidentBytes  int64           `json:"device_resident_bytes"`
		FitsPhonesGiB  []int           `json:"fits_phones_gib"`
		KVCache        string          `json:"kv_cache"`
		Quality        json.RawMessage `json:"quality"`
	} `json:"variants"`
}

func folderFrom(folder string, data []byte) (*Folder, string, error) {
	var fc folderConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&fc); err != nil {
		return nil, "", fmt.Errorf("not a folder config.json: %w", err)
	}
	f := &Folder{Backend: fc.Backend, Target: fc.Target, Runtime: Runtime{ExecuTorch: fc.RuntimeVersion, QAIRT: fc.QNNSDKVersion}, Windows: []Window{}}
	f.deriveLoadsOn()
	if fc.NeuroPilotSDK != nil {
		f.Runtime.NeuroPilotSDK = fc.NeuroPilotSDK.Build
	}
	if len(fc.Phones) > 0 && string(fc.Phones) != "null" {
		f.Phones = fc.Phones
	}
	if len(fc.PhonesByCache) > 0 && string(fc.PhonesByCache) != "null" {
		f.PhonesByCache = fc.PhonesByCache
	}
	for _, v := range fc.Variants {
		w := Window{Context: v.Context, Quantization: v.Quantization, SourceRevision: v.SourceRevision,
			ResidentBytes: v.ResidentBytes, FitsPhonesGiB: v.FitsPhonesGiB, KVCache: v.KVCache, Files: []FileEntry{}}
		if len(v.Quality) > 0 && string(v.Quality) != "null" {
			w.Quality = v.Quality
		}
		switch {
		case v.File != "":
			var sha string
			if err := json.Unmarshal(v.SHA256, &sha); err != nil {
				return nil, "", fmt.Errorf("window %d: sha256 of %s is not a string", v.Context, v.File)
			}
			w.Files = append(w.Files, FileEntry{Path: path.Join(folder, v.File), SHA256: sha, SizeBytes: v.SizeBytes})
		default:
			shas := map[string]string{}
			if err := json.Unmarshal(v.SHA256, &shas); err != nil {
				return nil, "", fmt.Errorf("window %d: sha256 is not a map of file names", v.Context)
			}
			names := append(append([]string(nil), v.Files...), v.Embedding)
			for _, n := range names {
				if n == "" {
					continue
				}
				w.Files = append(w.Files, FileEntry{Path: path.Join(folder, n), SHA256: shas[n]})
			}
		}
		f.Windows = append(f.Windows, w)
	}
	sort.Slice(f.Windows, func(i, j int) bool { return f.Windows[i].Context < f.Windows[j].Context })
	return f, fc.SourceModel, nil
}
