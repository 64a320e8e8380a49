// Package snapshot embeds the Hugging Face metadata of a few dozen models, so that `plan`
// works offline on a fresh machine and says so.
package snapshot

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/experimentalmachines/exe-expo/internal/model"
)

// Name identifies this snapshot in every offline plan.
const Name = "hf-configs-2026-12-02"

//go:embed data
var data embed.FS

// dir maps a Hub id to its folder: "Qwen/Qwen3-1.7B" → "data/Qwen__Qwen3-1.7B".
func dir(id string) string { return "data/" + strings.Replace(id, "/", "__", 1) }

// Has reports whether the snapshot holds id.
func Has(id string) bool {
	_, err := fs.Stat(data, dir(id)+"/config.json")
	return err == nil
}

// Models lists the ids in the snapshot, sorted.
func Models() []string {
	entries, _ := fs.ReadDir(data, "data")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, strings.Replace(e.Name(), "__", "/", 1))
		}
	}
	sort.Strings(out)
	return out
}

// Files returns the snapshot of id as model.Files.
func Files(id string) (model.Files, error) {
	if !Has(id) {
		return nil, notInSnapshot(fmt.Sprintf("%s is not in the embedded snapshot %s (it has %s)", id, Name, strings.Join(Models(), ", ")))
	}
	return files(dir(id)), nil
}

// notInSnapshot is a model the snapshot does not hold; it matches fs.ErrNotExist without
// ending its sentence in Go's "file does not exist".
type notInSnapshot string

func (e notInSnapshot) Error() string        { return string(e) }
func (e notInSnapshot) Is(target error) bool { return target == fs.ErrNotExist }

type files string

func (d files) ReadFile(_ context.Context, name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("file name %q is not a plain relative path", name)
	}
	b, err := data.ReadFile(string(d) + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return b, nil
}

func (d files) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	b, err := d.ReadFile(ctx, name)
	if err != nil {
		return nil, err
	}
	if off >= int64(len(b)) {
		return nil, nil
	}
	return b[off:min(int64(len(b)), off+length)], nil
}

var _ model.Files = files("")

// Load reads id's metadata from the snapshot into a model.Source. Its parameter count is
// the Hub's own safetensors total (HubParams) where the snapshot carries one, so that an
// offline plan sizes the model with the count an online plan reads from the safetensors
// headers, not one computed from the architecture (which counts a tied head once where a
// checkpoint such as Qwen3-0.6B stores it twice).
func Load(ctx context.Context, id string) (*model.Source, error) {
	f, err := Files(id)
	if err != nil {
		return nil, err
	}
	src := &model.Source{ID: id, Origin: "embedded snapshot " + Name}
	if err := model.Load(ctx, src, f); err != nil {
		return nil, err
	}
	if p, ok := HubParams(id); ok {
		src.Params, src.ParamsError = &p, ""
	}
	return src, nil
}

// totalsFile holds, per model, the Hub's safetensors summary (the model info's
// "safetensors" property: parameters per dtype and their total) with the key of its
// evidence in data/README.md.
const totalsFile = "data/safetensors.json"

// HubTotals is one model's entry in totalsFile.
type HubTotals struct {
	Parameters map[string]int64 `json:"parameters"`
	Total      int64            `json:"total"`
	Evidence   string           `json:"evidence"`
}

var totals = sync.OnceValues(func() (map[string]HubTotals, error) {
	b, err := data.ReadFile(totalsFile)
	if err != nil {
		return nil, err
	}
	var m map[string]HubTotals
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", totalsFile, err)
	}
	return m, nil
})

// Totals returns every model's Hub safetensors summary the snapshot carries (a copy).
func Totals() (map[string]HubTotals, error) {
	m, err := totals()
	return maps.Clone(m), err
}

// HubParams is id's parameter count as the Hub reports it (safetensors.total and its
// per-dtype split), and whether the snapshot carries it.
func HubParams(id string) (model.Params, bool) {
	m, err := totals()
	t, ok := m[id]
	if err != nil || !ok {
		return model.Params{}, false
	}
	return model.Params{Total: t.Total, ByDtype: maps.Clone(t.Parameters),
		Source: "the Hub's safetensors total, as the embedded snapshot " + Name + " holds it"}, true
}
