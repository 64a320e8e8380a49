package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/experimentalmachines/exe-expo/pkg/model"
	"github.com/experimentalmachines/exe-expo/pkg/snapshot"
)

// Hub is what opening a model needs from the Hub client: the repo's metadata at a revision
// (sha, pipeline tag, access) and its files for range reads.
type Hub interface {
	Source(ctx context.Context, id, revision string) (*model.Source, model.Files, error)
}

// ErrUnreachable marks a Hub that could not be reached at all (no network, DNS, refused),
// as opposed to one that answered with an error. Hub adapters wrap it.
var ErrUnreachable = errors.New("the Hugging Face Hub could not be reached")

// Open finds MODEL: a local folder holding config.json, else a Hub id read from the Hub, or
// from the embedded snapshot when the Hub cannot be reached (or hub is nil). The source's
// Origin says which, and Offline reports the snapshot case; the snapshot cannot answer for
// a revision, so its source carries a RevisionNote saying the revision was not checked.
func Open(ctx context.Context, ref, revision string, hub Hub) (src *model.Source, offline bool, err error) {
	if IsDir(ref) {
		src, err := OpenDir(ctx, ref, "")
		return src, false, err
	}
	if !model.ValidID(ref) {
		return nil, false, fmt.Errorf("%q is neither a local model folder nor a Hugging Face model id (org/name)", ref)
	}
	why := "no Hub client"
	if hub != nil {
		src, files, err := hub.Source(ctx, ref, revision)
		switch {
		case err == nil:
			if src.AccessError == "" {
				if err := model.Load(ctx, src, files); err != nil {
					return nil, false, err
				}
			}
			return src, false, nil
		case errors.Is(err, ErrUnreachable):
			why = err.Error()
		default:
			return nil, false, err
		}
	}
	src, err = snapshot.Load(ctx, ref)
	if err != nil {
		return nil, true, fmt.Errorf("%s; and %w", why, err)
	}
	src.Revision = revision
	if revision != "" {
		src.RevisionNote = "not checked: the embedded snapshot is not tied to any revision"
	}
	src.Origin = fmt.Sprintf("embedded snapshot %s (offline: %s)", snapshot.Name, why)
	return src, true, nil
}

// IsDir reports whether ref names a local folder (rather than a Hub id).
func IsDir(ref string) bool {
	st, err := os.Stat(ref)
	return err == nil && st.IsDir()
}

// OpenDir loads a local model folder. id names the Hub id the folder holds (the name rules,
// the output repo and ExecuTorch's Qualcomm registry go by it); empty means the folder's
// name, and the source says so (IDFromFolder).
func OpenDir(ctx context.Context, dir, id string) (*model.Source, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return nil, fmt.Errorf("%s is a folder without config.json; give a model folder or a Hub id (org/name)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	src := &model.Source{ID: id, Origin: "local folder " + abs}
	if id == "" {
		src.ID, src.IDFromFolder = filepath.Base(abs), true
	} else if !model.ValidID(id) {
		return nil, fmt.Errorf("--id %q is not a Hugging Face model id (org/name)", id)
	}
	if err := model.Load(ctx, src, model.Dir(abs)); err != nil {
		return nil, err
	}
	return src, nil
}
