// Package snapshot embeds the Hugging Face metadata of a few dozen models, so that `plan`
// works offline on a fresh machine and says so.
package snapshot

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/model"
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

// Load reads id's metadata from the snapshot into a model.Source.
func Load(ctx context.Context, id string) (*model.Source, error) {
	f, err := Files(id)
	if err != nil {
		return nil, err
	}
	src := &model.Source{ID: id, Origin: "embedded snapshot " + Name}
	if err := model.Load(ctx, src, f); err != nil {
		return nil, err
	}
	return src, nil
}
